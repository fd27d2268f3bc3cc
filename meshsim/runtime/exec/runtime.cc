#include "meshsim/runtime/exec/runtime.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "meshsim/mesh/internal/format.h"
#include "meshsim/runtime/array/internal/storage_blocks.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/claim_waits.h"
#include "meshsim/runtime/exec/internal/current_device.h"
#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/internal/fiber/fiber_scheduler.h"
#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/exec/internal/launch.h"
#include "meshsim/runtime/exec/internal/log.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"
#include "meshsim/runtime/exec/internal/waiter.h"
#include "meshsim/runtime/time/internal/launch_time.h"

namespace meshsim {
using namespace std::chrono_literals;
namespace {

// The record's clock readings (end times, events' virtual times) in seconds
// once `time` was replayed; else no end times and events at time 0.
void in_seconds(LaunchRecord& record, const LaunchTime& time) {
  if (!time.replayed()) {
    record.end_times.clear();
    for (TraceEvent& e : record.events) e.virtual_start = e.virtual_end = 0;
    return;
  }
  for (size_t position = 0; position < record.end_times.size(); ++position) {
    record.end_times[position] =
        time.seconds(static_cast<int>(position), record.end_times[position]);
  }
  for (TraceEvent& e : record.events) {
    e.virtual_start = time.seconds(e.position, e.virtual_start);
    e.virtual_end = time.seconds(e.position, e.virtual_end);
  }
}

size_t hash_mesh(const Mesh& mesh) {
  size_t h = mesh.abstract_mesh().hash();
  for (int id : mesh.device_ids()) h = h * 1'000'003 ^ static_cast<size_t>(id);
  return h;
}

// Past a century a launch timeout is none that matters, and deadlines must
// not overflow the clock.
constexpr auto kLongestTimeout = std::chrono::milliseconds(std::chrono::hours(24 * 365 * 100));

// Owns a launch's devices from construction to destruction. Claims them in
// increasing agent id order, so two launches that overlap wait for each other
// instead of deadlocking.
class DeviceClaim {
 public:
  // `caller`: the device whose body makes this launch (null for a host
  // thread). Its wait for a device another launch holds ends with
  // CancelledError once the caller's own launch failed or timed out, and
  // with DeadlockError when it is the wait that gives up on a cycle of such
  // waits (ClaimWaits, of any runtimes). A host thread waits up to
  // `timeout` (none when zero) for each device, then throws TimeoutError: a
  // cycle through a thread the host's code waits for (a body that joins a
  // thread launching on its own devices) cannot be seen, only timed out.
  // Whatever ends a claim early lets go of what it took.
  DeviceClaim(const std::vector<DeviceState*>& devices, const Launch& launch, DeviceState* caller,
              std::chrono::milliseconds timeout)
      : sorted_(devices), timeout_(timeout) {
    std::sort(sorted_.begin(), sorted_.end(),
              [](const DeviceState* a, const DeviceState* b) { return a->agent < b->agent; });
    for (size_t i = 0; i < sorted_.size(); ++i) {
      size_t held = i;  // to let go of if this claim ends early
      try {
        claim(sorted_[i], launch, caller, held);
      } catch (...) {
        release(held);
        throw;
      }
    }
  }
  ~DeviceClaim() { release(sorted_.size()); }
  DeviceClaim(const DeviceClaim&) = delete;
  DeviceClaim& operator=(const DeviceClaim&) = delete;

 private:
  static constexpr auto kRecheck = ClaimWaits::kSearchEvery;

  // Waits until `device` is free and takes it for `launch`; `held` devices
  // are taken already (set to 0 once they were let go of here).
  void claim(DeviceState* device, const Launch& launch, DeviceState* caller, size_t& held) {
    std::optional<ClaimWaits::Wait> wait;
    for (;;) {
      const uint32_t seen = device->unclaimed.load();
      const Launch* owner = nullptr;
      if (device->owner.compare_exchange_strong(owner, &launch, std::memory_order_acquire,
                                                std::memory_order_relaxed)) {
        return;
      }
      if (!wait) wait.emplace(caller, launch, *device);
      if (caller == nullptr) {
        wait_as_host(*device, owner, seen, launch);
        continue;
      }
      // Checked on every turn (other launches may keep taking the device).
      // What it holds is let go before the device settles: settling waits
      // for the other devices of its launch, which may need those.
      if (caller->launch->failed()) {
        wait.reset();
        release(held);
        held = 0;
        caller->waiter.cancel_if_aborted();
        throw CancelledError("launch from the body of device " + std::to_string(caller->id) +
                             ": its launch failed while this one waited for device " +
                             std::to_string(device->id) + ", which another launch holds");
      }
      if (std::string cycle = wait->give_up(); !cycle.empty()) {
        throw DeadlockError("launch on " + device->runtime.describe(launch.mesh().mesh()) +
                            " from the body of device " + std::to_string(caller->id) +
                            " would wait forever, in a cycle of launches that wait for each "
                            "other's devices: " + cycle);
      }
      // A device body (thread or fiber: a fiber must not block its worker,
      // where the owner may be queued) waits until an owner lets go, and
      // looks again after a while whether its own launch failed, which
      // does not change this word.
      Waiter parked;
      parked.wait_change_until(device->unclaimed, seen,
                               std::chrono::steady_clock::now() + kRecheck);
    }
  }

  // A host thread's wait for `device`, which `owner` held when it looked
  // (`seen`: the device's release count then).
  void wait_as_host(const DeviceState& device, const Launch* owner, uint32_t seen,
                    const Launch& launch) {
    if (timeout_.count() <= 0) {
      device.owner.wait(owner, std::memory_order_relaxed);
      return;
    }
    const auto now = std::chrono::steady_clock::now();
    if (!host_deadline_) host_deadline_ = now + timeout_;
    if (now >= *host_deadline_) {
      // Not naming the holder: it may end and be freed meanwhile.
      throw TimeoutError("launch on " + device.runtime.describe(launch.mesh().mesh()) +
                         " timed out after " + std::to_string(timeout_.count()) +
                         " ms waiting for " + device.name() +
                         ", which another launch holds (RuntimeOptions::launch_timeout)");
    }
    Waiter parked;
    parked.wait_change_until(device.unclaimed, seen, *host_deadline_);
  }

  // Lets go of the first `count` devices.
  void release(size_t count) {
    for (size_t i = 0; i < count; ++i) {
      sorted_[i]->owner.store(nullptr, std::memory_order_release);
      sorted_[i]->owner.notify_all();
      sorted_[i]->unclaimed.advance();
    }
  }

  std::vector<DeviceState*> sorted_;
  std::chrono::milliseconds timeout_;
  // A host thread's: when its wait for the devices ends.
  std::optional<std::chrono::steady_clock::time_point> host_deadline_;
};

// One replay of a launch priced after it ends at a time in the process:
// launches may share a model or a simulator, neither of which may be driven
// by two replays at once. Held by an agent: the device whose body made the
// launch, or the host thread. A device fiber waits for its turn parked, so
// its worker runs the other fibers meanwhile (a mutex blocked the worker,
// and with it a launch the replaying simulator made from its callback); a
// launch priced after it ends made by the agent replaying (from a
// simulator's callback) would wait for itself, and is refused.
class ReplayTurn {
 public:
  explicit ReplayTurn(const void* agent) {
    for (;;) {
      const uint32_t seen = released().load();
      const void* holder = nullptr;
      if (holder_.compare_exchange_strong(holder, agent, std::memory_order_acquire)) return;
      if (holder == agent) {
        throw RuntimeUsageError("a launch priced after it ends (congestion-aware network, "
                                "external clock) was made from inside another one's replay (a "
                                "simulator's callback)");
      }
      Waiter parked;
      parked.wait_change_until(released(), seen, std::chrono::steady_clock::now() + 10ms);
    }
  }
  ~ReplayTurn() {
    holder_.store(nullptr, std::memory_order_release);
    released().advance();
  }
  ReplayTurn(const ReplayTurn&) = delete;
  ReplayTurn& operator=(const ReplayTurn&) = delete;

 private:
  static WaitWord& released() {
    static WaitWord* word = new WaitWord;  // never destroyed, as the runtimes may outlive it
    return *word;
  }
  static inline std::atomic<const void*> holder_{nullptr};
};

// Marks a LaunchRecord (none: null) as filled by a running launch for as long
// as it lives. The records in use are the process's, not a runtime's: a
// record is plain data the host may hand to launches of several runtimes,
// and two launches filling one would write it at the same time.
class RecordInUse {
 public:
  // RuntimeUsageError, naming the launch's mesh, if a running launch fills
  // `record` already.
  RecordInUse(const LaunchRecord* record, FunctionRef<std::string()> mesh) : record_(record) {
    if (record_ == nullptr) return;
    std::lock_guard lock(mu());
    if (std::ranges::find(records(), record_) != records().end()) {
      record_ = nullptr;
      throw RuntimeUsageError("launch on " + mesh() +
                              ": its LaunchOptions::record is being filled by another launch "
                              "that is still running; a nested or concurrent launch needs a "
                              "record of its own");
    }
    records().push_back(record_);
  }
  ~RecordInUse() {
    if (record_ == nullptr) return;
    std::lock_guard lock(mu());
    std::erase(records(), record_);
  }
  RecordInUse(const RecordInUse&) = delete;
  RecordInUse& operator=(const RecordInUse&) = delete;

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::vector<const LaunchRecord*>& records() {
    static std::vector<const LaunchRecord*> in_use;
    return in_use;
  }
  const LaunchRecord* record_;
};

std::string join_ids(const std::vector<int>& ids) {
  std::string out;
  for (int id : ids) out += (out.empty() ? "" : ", ") + std::to_string(id);
  return out;
}

int at_least_one(int num_devices) {
  if (num_devices < 1 || num_devices > Mesh::kMaxDevices) {
    throw InvalidArgumentError("Runtime needs 1 to " + std::to_string(Mesh::kMaxDevices) +
                               " devices, got " + std::to_string(num_devices));
  }
  return num_devices;
}

ExecutionMode resolve_execution(const RuntimeOptions& options) {
  if (options.execution) {
    const ExecutionMode mode = *options.execution;
    if (mode != ExecutionMode::kThreads && mode != ExecutionMode::kFibers) {
      throw InvalidArgumentError(
          "RuntimeOptions::execution must be ExecutionMode::kThreads or kFibers, got " +
          std::to_string(static_cast<int>(mode)));
    }
    return mode;
  }
  const char* env = execution_mode_variable();
  if (env == nullptr) return ExecutionMode::kThreads;
  try {
    return parse_execution_mode(env);
  } catch (const InvalidArgumentError& e) {
    throw InvalidArgumentError(std::string("environment variable MESHSIM_EXEC: ") + e.what());
  }
}

// Checked in either mode: a wrong value is a mistake even where it is unused.
void check_fiber_options(const RuntimeOptions& options) {
  constexpr int kMaxWorkers = 1024;
  if (options.fiber_workers < 0 || options.fiber_workers > kMaxWorkers) {
    throw InvalidArgumentError("RuntimeOptions::fiber_workers must be 0 (one per usable core) to " +
                               std::to_string(kMaxWorkers) + ", got " +
                               std::to_string(options.fiber_workers));
  }
  constexpr size_t kMinStack = size_t{64} << 10, kMaxStack = size_t{1} << 30;
  if (options.fiber_stack_bytes < kMinStack || options.fiber_stack_bytes > kMaxStack) {
    throw InvalidArgumentError("RuntimeOptions::fiber_stack_bytes must be 64 KiB to 1 GiB, got " +
                               std::to_string(options.fiber_stack_bytes));
  }
}

// The threads a runtime may bind: its device threads, or its fiber workers
// (fiber_workers 0: one per usable CPU, which the binding counts).
CpuBinding choose_binding(const RuntimeOptions& options, ExecutionMode mode, int max_devices) {
  if (mode == ExecutionMode::kThreads) return CpuBinding::choose(options.bind_threads, max_devices);
  return CpuBinding::choose(options.bind_threads,
                            options.fiber_workers > 0 ? std::optional(options.fiber_workers)
                                                      : std::nullopt);
}

}  // namespace

const char* to_string(ExecutionMode mode) {
  return mode == ExecutionMode::kFibers ? "fibers" : "threads";
}

const char* execution_mode_variable() {
  const char* env = std::getenv("MESHSIM_EXEC");
  return env == nullptr || *env == '\0' ? nullptr : env;
}

ExecutionMode parse_execution_mode(std::string_view text) {
  if (text == "threads") return ExecutionMode::kThreads;
  if (text == "fibers") return ExecutionMode::kFibers;
  throw InvalidArgumentError("unknown execution mode " + quote_text(text) +
                             ": expected 'threads' or 'fibers'");
}

Runtime::Runtime(RuntimeOptions options)
    : impl_(std::make_unique<RuntimeImpl>(
          options, options.max_devices.value_or(RuntimeOptions::kDefaultMaxDevices), 0)) {}

Runtime::Runtime(int num_devices, RuntimeOptions options)
    : impl_(std::make_unique<RuntimeImpl>(options, options.max_devices.value_or(num_devices),
                                          at_least_one(num_devices))) {}

Runtime::~Runtime() = default;
int Runtime::num_devices() const { return impl_->num_devices(); }
int Runtime::started_devices() const { return impl_->started_devices(); }
ExecutionMode Runtime::execution() const { return impl_->execution(); }
int Runtime::fiber_workers() const { return impl_->fiber_workers(); }
bool Runtime::binds_threads() const { return impl_->binds_threads(); }
FiberStackStats Runtime::fiber_stack_stats() const { return impl_->fiber_stack_stats(); }
void Runtime::launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body) {
  impl_->launch(mesh, body, LaunchOptions{});
}

void Runtime::launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body,
                     const LaunchOptions& options) {
  impl_->launch(mesh, body, options);
}
spdlog::logger& Runtime::logger() { return impl_->logger(); }
size_t Runtime::interned_mesh_count() { return impl_->interned_mesh_count(); }

RuntimeImpl::RuntimeImpl(RuntimeOptions options, int max_devices, int start_now)
    : options_(options),
      execution_(resolve_execution(options)),
      max_devices_(max_devices),
      binding_(choose_binding(options, execution_, max_devices)),
      logger_(make_runtime_logger()),
      // Links between agents: the cores of one device have their own.
      // Clamped: the limit is checked below, after the members are made.
      fabric_(std::clamp(max_devices, 1, Mesh::kMaxDevices), kMaxCores) {
  check_fiber_options(options);
  if (options.launch_timeout.count() < 0) {
    throw InvalidArgumentError("RuntimeOptions::launch_timeout must be positive, or zero for "
                               "none, got " + std::to_string(options.launch_timeout.count()) +
                               " ms");
  }
  if (const auto& p = options.wait_policy; p && (p->spin_ns < 0 || p->yield_ns < 0 ||
                                                  p->spin_ns > WaitPolicy::kMaxBudgetNs ||
                                                  p->yield_ns > WaitPolicy::kMaxBudgetNs)) {
    throw InvalidArgumentError("RuntimeOptions::wait_policy budgets must be 0 to 1 s "
                               "(WaitPolicy::kMaxBudgetNs), got spin_ns " +
                               std::to_string(p->spin_ns) + ", yield_ns " +
                               std::to_string(p->yield_ns));
  }
  if (!(options.warn_fraction > 0 && options.warn_fraction <= 1)) {
    throw InvalidArgumentError("RuntimeOptions::warn_fraction must be in (0, 1], got " +
                               std::to_string(options.warn_fraction));
  }
  if (max_devices < 1 || max_devices > Mesh::kMaxDevices) {
    throw InvalidArgumentError("RuntimeOptions::max_devices must be 1 to " +
                               std::to_string(Mesh::kMaxDevices) + ", got " +
                               std::to_string(max_devices));
  }
  if (max_devices < start_now) {
    throw InvalidArgumentError("RuntimeOptions::max_devices " + std::to_string(max_devices) +
                               " is less than the " + std::to_string(start_now) +
                               " devices the Runtime starts");
  }
  devices_.reset(new std::atomic<DeviceState*>[max_devices]);
  for (int id = 0; id < max_devices; ++id) devices_[id].store(nullptr, std::memory_order_relaxed);
  if (execution_ == ExecutionMode::kFibers) {
    fibers_ = std::make_unique<FiberScheduler>(binding_.threads(), options.fiber_stack_bytes,
                                               binding_);
  }
  try {
    for (int id = 0; id < start_now; ++id) device(id);
  } catch (...) {
    stop_devices();  // no destructor runs for a constructor that throws
    throw;
  }
}

RuntimeExtension& RuntimeImpl::extension(FunctionRef<std::unique_ptr<RuntimeExtension>()> make) {
  if (RuntimeExtension* made = extension_ptr_.load(std::memory_order_acquire)) return *made;
  std::lock_guard lock(extension_mu_);
  if (extension_ == nullptr) {
    extension_ = make();
    extension_ptr_.store(extension_.get(), std::memory_order_release);
  }
  return *extension_;
}

thread_local const RuntimeImpl* RuntimeImpl::changing_ = nullptr;

void RuntimeImpl::while_idle(const char* what, FunctionRef<void()> change) {
  if (calling_device() != nullptr) {
    throw RuntimeUsageError(std::string(what) + " from a device of the runtime, during a launch");
  }
  std::lock_guard lock(in_flight_mu_);
  if (launches_in_flight_ != 0) {
    throw RuntimeUsageError(std::string(what) + " while " + std::to_string(launches_in_flight_) +
                            " launch(es) of the runtime run");
  }
  const RuntimeImpl* outer = changing_;
  changing_ = this;
  struct Restore {
    const RuntimeImpl* outer;
    ~Restore() { changing_ = outer; }
  } restore{outer};
  change();
}

void RuntimeImpl::without_changes(FunctionRef<void()> read) {
  // A device thread runs during a launch, when no change can; a change may
  // read (its error messages do) under the lock it already holds.
  if (calling_device() != nullptr || changing_ == this) {
    read();
    return;
  }
  std::lock_guard lock(in_flight_mu_);
  read();
}

RuntimeImpl::~RuntimeImpl() {
  // It would wait for the launch that runs this very code, or encloses the
  // one that does: fail fast and loudly instead of hanging (a destructor
  // cannot throw). On stderr itself: the logger may be switched off.
  const DeviceState* const caller = current_device();
  for (const Launch* l = caller != nullptr ? caller->launch : nullptr; l != nullptr;
       l = l->enclosing()) {
    if (&l->runtime() != this) continue;
    std::fprintf(stderr,
                 l == caller->launch
                     ? "meshsim: Runtime destroyed from the body of its own device %d: it would "
                       "wait forever for the launch that runs that body; terminating\n"
                     : "meshsim: Runtime destroyed from the body of device %d of another "
                       "runtime, in a launch made inside a launch of the runtime destroyed: it "
                       "would wait forever for that launch, which waits for this body; "
                       "terminating\n",
                 caller->id);
    std::terminate();
  }
  {
    std::unique_lock lock(in_flight_mu_);
    stopping_ = true;
    if (launches_in_flight_ > 0) {
      logger_->error("Runtime destroyed while {} launch(es) run; waiting for them to finish",
                     launches_in_flight_);
      // On the word, not a condition variable: the body of a device of
      // another runtime may run this, and as a fiber it must not block its
      // worker, which may have to run the fibers those launches wait for.
      // The word advances under the lock, so no wake-up is lost; the wait
      // takes a deadline, and a far one costs nothing. From a device body
      // (of another runtime) the wait is one of the ClaimWaits: the launches
      // it waits for may wait for a device its own launch holds.
      std::optional<ClaimWaits::Wait> in_cycles;
      if (caller != nullptr) in_cycles.emplace(*caller, *this);
      while (launches_in_flight_ > 0) {
        const uint32_t seen = launches_ended_.load();
        lock.unlock();
        Waiter parked;
        parked.wait_change_until(launches_ended_, seen,
                                 std::chrono::steady_clock::now() + std::chrono::hours(1));
        lock.lock();
      }
    }
  }
  stop_devices();
}

int RuntimeImpl::fiber_workers() const { return fibers_ != nullptr ? fibers_->workers() : 0; }
FiberStackStats RuntimeImpl::fiber_stack_stats() const {
  return fibers_ != nullptr ? fibers_->stack_stats() : FiberStackStats{};
}

void RuntimeImpl::stop_devices() {
  if (fibers_ != nullptr) return;  // fiber devices have no threads of their own
  for (auto& device : started_) {
    device->launch = nullptr;
    device->work.advance();
  }
  for (auto& device : started_) device->thread.join();
}

void RuntimeImpl::device_main(DeviceState& device) {
  binding_.enter(device.core == 0 ? device.id : -1);  // the cores of a device are not bound
  set_current_device(&device);
  // Not work.load(): a launch may already have advanced the word before this
  // thread got to run. The word starts at zero.
  uint32_t seen = 0;
  for (;;) {
    seen = device.idle_waiter.wait_change(device.work, seen);
    if (device.launch == nullptr) return;  // the destructor's wake-up
    device.launch->run_device(device.position);
    detail::release_thread_storage_blocks();  // an idle device thread holds no cached storage
  }
}

DeviceState& RuntimeImpl::device(int id) {
  if (DeviceState* started = devices_[id].load(std::memory_order_acquire)) return *started;
  std::lock_guard lock(grow_mu_);
  if (DeviceState* started = devices_[id].load(std::memory_order_acquire)) return *started;
  DeviceState& device = start_agent(id, 0);
  devices_[id].store(&device, std::memory_order_release);
  num_started_.fetch_add(1, std::memory_order_relaxed);
  return device;
}

DeviceState& RuntimeImpl::agent(int agent) {
  if (agent < max_devices_) return device(agent);
  std::lock_guard lock(grow_mu_);
  if (const auto it = cores_.find(agent); it != cores_.end()) return *it->second;
  cores_.reserve(cores_.size() + 1);  // nothing throws once the thread runs
  DeviceState& core = start_agent(device_of(agent), core_of(agent));
  cores_.emplace(agent, &core);
  return core;
}

DeviceState& RuntimeImpl::start_agent(int id, int core) {
  // Whatever can throw comes before the thread starts or is published.
  if (started_.size() == started_.capacity()) {
    started_.reserve(std::max<size_t>(16, 2 * started_.size()));
  }
  auto state = std::make_unique<DeviceState>(id, core, agent_id(id, core), *this);
  if (fibers_ == nullptr) {
    try {
      state->thread = std::thread([this, d = state.get()] { device_main(*d); });
    } catch (const std::system_error& e) {
      throw ResourceError("cannot start the thread of device " + std::to_string(id) +
                          (core > 0 ? " core " + std::to_string(core) : std::string()) + " (" +
                          std::to_string(started_.size()) + " started): " + e.what() +
                          "; fiber mode (RuntimeOptions::execution) runs many devices on a few "
                          "threads");
    }
  }
  return *started_.emplace_back(std::move(state));
}

DeviceState* RuntimeImpl::calling_device() const {
  DeviceState* device = current_device();
  return device != nullptr && &device->runtime == this ? device : nullptr;
}

void RuntimeImpl::check_device_ids(const Mesh& mesh) const {
  for (int id : mesh.device_ids()) {
    if (id >= max_devices_) {
      throw RuntimeUsageError("mesh " + mesh.to_string() + " uses device " + std::to_string(id) +
                              " but the runtime has at most " + std::to_string(max_devices_) +
                              " devices (RuntimeOptions::max_devices)");
    }
  }
}

std::string RuntimeImpl::describe(const Mesh& mesh) const {
  const std::vector<int>& ids = mesh.device_ids();
  if (std::ranges::all_of(ids, [&](int id) { return id < max_devices_; })) return mesh.to_string();
  std::string out = "Mesh(" + mesh.abstract_mesh().axes_to_string() + "; devices=[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(device_of(ids[i]));
    if (core_of(ids[i]) > 0) {
      out += " core ";
      out += std::to_string(core_of(ids[i]));
    }
  }
  return out + "])";
}

void RuntimeImpl::check_not_nested_on_own_devices(const Mesh& mesh,
                                                  const DeviceState& caller) const {
  // The caller's body runs in caller.launch (written before the caller's
  // thread or fiber was started for it). Each enclosing launch waits for the one inside
  // it, so a device any of them holds is never freed.
  // A launch that holds a device's other core holds its core 0 too.
  for (const Launch* holder = caller.launch; holder != nullptr; holder = holder->enclosing()) {
    std::vector<int> held;
    for (int agent : mesh.device_ids()) {
      const int id = device_of(agent);
      const DeviceState* device = devices_[id].load(std::memory_order_acquire);
      if (device != nullptr && device->owner.load(std::memory_order_relaxed) == holder) {
        held.push_back(id);
      }
    }
    if (held.empty()) continue;
    std::sort(held.begin(), held.end());
    held.erase(std::unique(held.begin(), held.end()), held.end());
    throw RuntimeUsageError(
        "launch on " + describe(mesh) + " from the body of device " + std::to_string(caller.id) +
        " would wait forever: device(s) " + join_ids(held) + " belong to the launch on " +
        describe(holder->mesh().mesh()) +
        (holder == caller.launch ? " that runs this body" : " that encloses this body's launch"));
  }
}

std::shared_ptr<MeshState> RuntimeImpl::intern(const Mesh& mesh) {
  const size_t hash = hash_mesh(mesh);
  std::lock_guard lock(meshes_mu_);
  const auto [first, last] = mesh_index_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    if (it->second->state->mesh() != mesh) continue;
    meshes_.splice(meshes_.begin(), meshes_, it->second);  // iterators stay valid
    return it->second->state;
  }
  meshes_.push_front({hash, std::make_shared<MeshState>(mesh, fabric_, group_layouts_)});
  mesh_index_.emplace(hash, meshes_.begin());
  std::shared_ptr<MeshState> fresh = meshes_.front().state;
  // Drop the least recently launched meshes no launch holds. use_count() is
  // exact here: only this function, under the lock, copies the pointers.
  for (auto it = meshes_.end();
       meshes_.size() > Runtime::kMaxInternedMeshes && it != meshes_.begin();) {
    --it;
    if (it->state.use_count() > 1) continue;
    const auto [from, to] = mesh_index_.equal_range(it->hash);
    for (auto entry = from; entry != to; ++entry) {
      if (entry->second == it) {
        mesh_index_.erase(entry);
        break;
      }
    }
    it = meshes_.erase(it);
  }
  return fresh;
}

size_t RuntimeImpl::interned_mesh_count() {
  std::lock_guard lock(meshes_mu_);
  return meshes_.size();
}

void RuntimeImpl::launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body,
                         const LaunchOptions& options) {
  if (!body) throw InvalidArgumentError("launch on " + mesh.to_string() + ": empty body");
  check_device_ids(mesh);
  run(mesh, body, options);
}

bool RuntimeImpl::claimed(int id) const {
  const DeviceState* device = devices_[id].load(std::memory_order_acquire);
  return device != nullptr && device->owner.load(std::memory_order_acquire) != nullptr;
}

void RuntimeImpl::launch_agents(const Mesh& mesh, const std::function<void(DeviceContext&)>& body,
                                const LaunchOptions& options) {
  run(mesh, body, options);
}

void RuntimeImpl::run(const Mesh& mesh_arg, const std::function<void(DeviceContext&)>& body,
                      const LaunchOptions& options) {
  if (options.trace && options.record == nullptr) {
    throw InvalidArgumentError("launch on " + describe(mesh_arg) +
                               ": LaunchOptions::trace needs LaunchOptions::record to put the "
                               "events in");
  }
  const RecordInUse record_in_use(options.record, [&] { return describe(mesh_arg); });
  // Emptied first: a launch refused below leaves no earlier launch's record.
  if (options.record != nullptr) *options.record = LaunchRecord{};
  if (options.trace && options.trace_capacity == 0) {
    throw InvalidArgumentError("launch on " + describe(mesh_arg) +
                               ": LaunchOptions::trace_capacity must be at least 1");
  }
  std::shared_ptr<LaunchTime> time;
  if (const auto& config = options.time ? options.time : options_.virtual_time) {
    time = std::make_shared<LaunchTime>(*config, mesh_arg, num_devices(), describe(mesh_arg));
  }
  // Before anything is acquired: a launch nested on a device its own launch
  // holds would wait forever.
  // The caller may be a device of another runtime, whose launch may itself
  // have been started from a device of this one: the chain of enclosing
  // launches crosses runtimes, and any of them may hold a device asked for.
  DeviceState* const caller = current_device();
  if (caller != nullptr) check_not_nested_on_own_devices(mesh_arg, *caller);
  // For the reports of the caller's launch: it waits in this one.
  struct Nested {
    DeviceState* caller;
    explicit Nested(DeviceState* c) : caller(c) {
      if (caller != nullptr) caller->in_nested_launch.store(true, std::memory_order_relaxed);
    }
    ~Nested() {
      if (caller != nullptr) caller->in_nested_launch.store(false, std::memory_order_relaxed);
    }
  } nested(caller);
  const std::shared_ptr<MeshState> pinned = intern(mesh_arg);
  MeshState& mesh_state = *pinned;
  {
    std::lock_guard lock(in_flight_mu_);
    if (stopping_) throw RuntimeUsageError("launch on a Runtime that is being destroyed");
    ++launches_in_flight_;
  }
  struct InFlight {
    RuntimeImpl& rt;
    ~InFlight() {
      std::lock_guard lock(rt.in_flight_mu_);
      if (--rt.launches_in_flight_ == 0) rt.launches_ended_.advance();
    }
  } in_flight{*this};
  const Mesh& mesh = mesh_state.mesh();
  std::vector<DeviceState*> devices;
  devices.reserve(mesh.size());
  for (int id : mesh.device_ids()) devices.push_back(&agent(id));
  const WaitPolicy policy =
      options_.wait_policy.value_or(WaitPolicy::for_threads(static_cast<int>(devices.size()),
                                                            binding_.cpu_count()));
  // Everything that allocates comes before the devices are claimed (but a
  // trace's events); the claim is released however this function is left.
  const LaunchHandle launch(new Launch(mesh_state, std::move(devices),
                                       FunctionRef<void(DeviceContext&)>(body), policy,
                                       caller != nullptr ? caller->launch : nullptr, time.get(),
                                       {options.trace, options.trace_capacity}));
  std::vector<std::unique_ptr<Fiber>> fibers;
  if (fibers_ != nullptr) fibers = fibers_->prepare(*launch);
  // A launching thread that would only wait runs block 0 of the fibers
  // itself (FiberRunner::run_to_end), but not with a launch timeout: a
  // device in an endless loop of its own would then hold the thread that
  // must time it out.
  std::optional<FiberRunner> here;
  if (fibers_ != nullptr && caller == nullptr && options_.launch_timeout.count() <= 0) {
    here.emplace();
    const auto [begin, end] = fibers_->block(fibers.size(), 0);
    here->reserve(end - begin);
  }
  std::string unreceived;
  {
    const DeviceClaim claim(launch->devices(), *launch, current_device(),
                            std::min(options_.launch_timeout, kLongestTimeout));
    launch->start(fibers_.get(), fibers, here ? &*here : nullptr);
    bool own_core = false;
    if (here) {
      hosts_running_fibers_.fetch_add(1, std::memory_order_relaxed);
      here->run_to_end();
      // If the launching threads running fibers (or waiting after them) and
      // the other workers each have a core, this one may spin for the rest.
      own_core = fibers_->workers() - 1 + hosts_running_fibers_.load(std::memory_order_relaxed) <=
                 binding_.cpu_count();
    }
    wait_for(*launch, own_core);
    if (here) hosts_running_fibers_.fetch_sub(1, std::memory_order_relaxed);
    if (time != nullptr) time->release_devices();  // async handles kept past the launch
    // Clean up while this launch still owns the devices: once they are
    // released another launch may use the same rendezvous and links.
    if (launch->failed()) {
      mesh_state.reset_after_abort();
    } else {
      unreceived = mesh_state.take_unreceived_messages();
    }
    // The devices exported their events as their parts ended; their traces
    // are reused once they are released. An export that ran out of memory
    // does not hide the launch's own error.
    if (options.record != nullptr) {
      try {
        launch->take_events(*options.record);
      } catch (...) {
        options.record->events.clear();
        if (!launch->failed()) throw;
      }
    }
  }
  // A launch that prices after it ends replays its clocks (virtual_time.h)
  // once it let the devices go, whether or not the caller asked for a
  // record: an external simulator is driven by the replay. A failed launch
  // is not replayed (its clocks stopped anywhere).
  std::exception_ptr replay_error;
  if (time != nullptr && time->deferred() && !launch->failed()) {
    try {
      thread_local const char host_agent = 0;  // a host thread's identity
      const DeviceState* caller = current_device();
      const ReplayTurn turn(caller != nullptr ? static_cast<const void*>(caller) : &host_agent);
      time->replay();
    } catch (...) {
      replay_error = std::current_exception();
    }
  }
  if (options.record != nullptr) {
    // A failed launch's clocks stopped wherever each device was cancelled,
    // which varies from run to run: it has no end times to report.
    if (!launch->failed()) options.record->end_times = launch->end_times();
    if (time != nullptr && time->deferred()) in_seconds(*options.record, *time);
  }
  if (launch->failed()) launch->rethrow();
  if (!unreceived.empty()) {
    throw UnreceivedMessageError("launch on " + describe(mesh) +
                                 " ended with messages sent by psend and never received: " +
                                 unreceived);
  }
  if (replay_error != nullptr) std::rethrow_exception(replay_error);
}

void RuntimeImpl::wait_for(Launch& launch, bool own_core) noexcept {
  // The launching thread spins only on a core of its own (a yield costs
  // microseconds in a VM, about a fiber launch's whole length): otherwise
  // the devices need the cores.
  Waiter host;
  host.set_policy({.spin_ns = own_core ? 10'000 : 0, .yield_ns = 20'000});
  const uint32_t initial = launch.done_initial();
  const auto timeout = std::min(options_.launch_timeout, kLongestTimeout);
  if (timeout.count() <= 0) {
    host.wait_change(launch.done(), initial);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto warn_at =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  timeout * options_.warn_fraction);
  if (!host.wait_change_until(launch.done(), initial, warn_at)) {
    logger_->warn("{}", launch.progress_report("launch on " + describe(launch.mesh().mesh()) +
                                               " still running after " +
                                               std::to_string((warn_at - start) / 1ms) + " ms:"));
  }
  if (host.wait_change_until(launch.done(), initial, start + timeout)) return;
  launch.fail(/*device_id=*/-1,
              std::make_exception_ptr(TimeoutError(launch.progress_report(
                  "launch on " + describe(launch.mesh().mesh()) + " timed out after " +
                  std::to_string(timeout.count()) + " ms:"))));
  // Waits inside meshsim are cancelled now; a device in its own code is not.
  // Said once a timeout but at least a second later, then ever more rarely
  // (up to once a minute): a 1 ms timeout must not log a line a millisecond.
  std::chrono::steady_clock::duration every = std::max<std::chrono::milliseconds>(timeout, 1s);
  while (!host.wait_change_until(launch.done(), initial,
                                 std::chrono::steady_clock::now() + every)) {
    logger_->error("{}", launch.progress_report("launch timed out and is still waiting for "
                                                "devices to return from their own code:"));
    every = std::max<std::chrono::steady_clock::duration>(
        timeout, std::min<std::chrono::steady_clock::duration>(2 * every, 1min));
  }
}

}  // namespace meshsim
