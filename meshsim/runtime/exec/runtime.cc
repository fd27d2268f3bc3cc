#include "meshsim/runtime/exec/runtime.h"

#include <algorithm>

#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/launch.h"
#include "meshsim/runtime/exec/internal/log.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/internal/function_ref.h"

namespace meshsim {
using namespace std::chrono_literals;
namespace {

size_t hash_mesh(const Mesh& mesh) {
  size_t h = mesh.abstract_mesh().hash();
  for (int id : mesh.device_ids()) h = h * 1'000'003 ^ static_cast<size_t>(id);
  return h;
}

}  // namespace

Runtime::Runtime(int num_devices, RuntimeOptions options)
    : options_(options), logger_(make_runtime_logger()) {
  if (num_devices < 1) {
    throw InvalidArgumentError("Runtime needs at least one device, got " +
                               std::to_string(num_devices));
  }
  devices_.reserve(num_devices);
  for (int id = 0; id < num_devices; ++id) devices_.push_back(std::make_unique<DeviceState>(id));
  for (auto& device : devices_) {
    device->thread = std::thread([this, d = device.get()] { device_main(*d); });
  }
}

Runtime::~Runtime() {
  {
    std::unique_lock lock(in_flight_mu_);
    stopping_ = true;
    if (launches_in_flight_ > 0) {
      logger_->error("Runtime destroyed while {} launch(es) run; waiting for them to finish",
                     launches_in_flight_);
      in_flight_cv_.wait(lock, [&] { return launches_in_flight_ == 0; });
    }
  }
  for (auto& device : devices_) {
    device->launch = nullptr;
    device->work.advance();
  }
  for (auto& device : devices_) device->thread.join();
}

void Runtime::device_main(DeviceState& device) {
  // Not work.load(): a launch may already have advanced the word before this
  // thread got to run. The word starts at zero.
  uint32_t seen = 0;
  for (;;) {
    seen = device.idle_waiter.wait_change(device.work, seen);
    if (device.launch == nullptr) return;  // the destructor's wake-up
    device.launch->run_device(device.position);
  }
}

std::shared_ptr<MeshState> Runtime::intern(const Mesh& mesh) {
  for (int id : mesh.device_ids()) {
    if (id >= num_devices()) {
      throw RuntimeUsageError("mesh " + mesh.to_string() + " uses device " + std::to_string(id) +
                              " but the runtime has " + std::to_string(num_devices()) +
                              " devices");
    }
  }
  const size_t hash = hash_mesh(mesh);
  std::lock_guard lock(meshes_mu_);
  const auto [first, last] = mesh_index_.equal_range(hash);
  for (auto it = first; it != last; ++it) {
    if (it->second->state->mesh() != mesh) continue;
    meshes_.splice(meshes_.begin(), meshes_, it->second);  // iterators stay valid
    return it->second->state;
  }
  meshes_.push_front({hash, std::make_shared<MeshState>(mesh)});
  mesh_index_.emplace(hash, meshes_.begin());
  std::shared_ptr<MeshState> fresh = meshes_.front().state;
  // Drop the least recently launched meshes no launch holds. use_count() is
  // exact here: only this function, under the lock, copies the pointers.
  for (auto it = meshes_.end(); meshes_.size() > kMaxInternedMeshes && it != meshes_.begin();) {
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

size_t Runtime::interned_mesh_count() {
  std::lock_guard lock(meshes_mu_);
  return meshes_.size();
}

std::vector<DeviceState*> Runtime::acquire(const Mesh& mesh) {
  // Claim devices in increasing id order, so two launches that overlap wait
  // for each other instead of deadlocking.
  std::vector<int> ids = mesh.device_ids();
  std::sort(ids.begin(), ids.end());
  for (int id : ids) {
    auto& owned = devices_[id]->owned;
    for (uint32_t expected = 0; !owned.compare_exchange_strong(expected, 1);
         expected = 0) {
      owned.wait(1);
    }
  }
  std::vector<DeviceState*> by_position;
  by_position.reserve(ids.size());
  for (int id : mesh.device_ids()) by_position.push_back(devices_[id].get());
  return by_position;
}

void Runtime::release(const std::vector<DeviceState*>& devices) {
  for (DeviceState* device : devices) {
    device->owned.store(0, std::memory_order_release);
    device->owned.notify_all();
  }
}

void Runtime::launch(const Mesh& mesh_arg, const std::function<void(DeviceContext&)>& body) {
  if (!body) throw InvalidArgumentError("launch on " + mesh_arg.to_string() + ": empty body");
  const std::shared_ptr<MeshState> pinned = intern(mesh_arg);
  MeshState& mesh_state = *pinned;
  {
    std::lock_guard lock(in_flight_mu_);
    if (stopping_) throw RuntimeUsageError("launch on a Runtime that is being destroyed");
    ++launches_in_flight_;
  }
  struct InFlight {
    Runtime& rt;
    ~InFlight() {
      std::lock_guard lock(rt.in_flight_mu_);
      if (--rt.launches_in_flight_ == 0) rt.in_flight_cv_.notify_all();
    }
  } in_flight{*this};
  const Mesh& mesh = mesh_state.mesh();
  std::vector<DeviceState*> devices = acquire(mesh);
  const WaitPolicy policy =
      options_.wait_policy.value_or(WaitPolicy::for_threads(static_cast<int>(devices.size())));
  auto* launch = new Launch(mesh_state, devices, FunctionRef<void(DeviceContext&)>(body), policy, *logger_);
  for (int position = 0; position < mesh.size(); ++position) {
    DeviceState& device = *devices[position];
    device.launch = launch;
    device.position = position;
    device.work.advance();
  }
  wait_for(*launch);
  // Clean up while this launch still owns the devices: after release() another
  // launch may use the same rendezvous and channels.
  const bool failed = launch->failed();
  std::string unreceived;
  if (failed) {
    mesh_state.reset_after_abort();
  } else {
    unreceived = mesh_state.take_unreceived_messages();
  }
  release(devices);
  struct Releaser {
    Launch* l;
    ~Releaser() { l->release(); }
  } releaser{launch};
  if (failed) launch->rethrow();
  if (!unreceived.empty()) {
    throw UnreceivedMessageError("launch on " + mesh.to_string() +
                                 " ended with messages sent by psend and never received: " +
                                 unreceived);
  }
}

void Runtime::wait_for(Launch& launch) {
  // The launching thread never spins: the devices need the cores.
  Waiter host;
  host.set_policy({.spin_ns = 0, .yield_ns = 20'000});
  const uint32_t initial = launch.done_initial();
  const auto timeout = options_.launch_timeout;
  if (timeout.count() <= 0) {
    host.wait_change(launch.done(), initial);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const auto warn_at =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  timeout * options_.warn_fraction);
  if (!host.wait_change_until(launch.done(), initial, warn_at)) {
    logger_->warn("{}", launch.progress_report("launch on " + launch.mesh().mesh().to_string() +
                                               " still running after " +
                                               std::to_string((warn_at - start) / 1ms) + " ms:"));
  }
  if (host.wait_change_until(launch.done(), initial, start + timeout)) return;
  launch.fail(/*device_id=*/-1,
              std::make_exception_ptr(TimeoutError(launch.progress_report(
                  "launch on " + launch.mesh().mesh().to_string() + " timed out after " +
                  std::to_string(timeout.count()) + " ms:"))));
  // Waits inside meshsim are cancelled now; a device in its own code is not.
  while (!host.wait_change_until(launch.done(), initial,
                                 std::chrono::steady_clock::now() + timeout)) {
    logger_->error("{}", launch.progress_report("launch timed out and is still waiting for "
                                                "devices to return from their own code:"));
  }
}

}  // namespace meshsim
