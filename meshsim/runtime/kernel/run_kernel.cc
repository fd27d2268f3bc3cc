#include "meshsim/runtime/kernel/run_kernel.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/launch.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"
#include "meshsim/runtime/kernel/internal/kernel_run.h"
#include "meshsim/runtime/kernel/internal/kernel_shard.h"

namespace meshsim {

// Friend of KernelContext: sets its per-kernel fields.
struct KernelRun {
  static void run(DeviceContext& ctx, const KernelSpec& spec, const KernelPrograms& programs,
                  int program, FunctionRef<void(KernelContext&)> body);
  // The device's context at the first nesting depth no kernel uses.
  static KernelContext& free_context(DeviceState& device);
  static KernelWords& words(KernelContext& k);
  static void enter(KernelContext& k, DeviceContext& ctx, const KernelSpec& spec,
                    KernelGroup& group, KernelShard& shard, KernelAgent& agent, int position,
                    const KernelPrograms& programs, int program, const GroupRef& meeting);
};

namespace {

// What position 0 offers the others at the entry meeting: the table of
// shards it made, and its spec, against which each compares its own. Both
// live until every device has arrived or settled (position 0 leaves the
// meeting only then, and a settled device never reaches it).
struct EntryOffer {
  const std::shared_ptr<KernelGroup>* group;
  const KernelSpec* spec;
};

std::string describe_buffer(const KernelSpec::BufferDecl& b) {
  return std::string(dtype_name(b.dtype)) + shape_to_string(b.shape);
}

// The first way `mine` and `first` (position 0's) declare different kernels
// — name, a buffer's dtype or shape, buffer count, semaphore counts,
// collective id, copy mode (and seed, in random mode), race detection — as
// "A but device D declares B", or empty.
std::string spec_difference(const KernelSpec& mine, const KernelSpec& first, int first_device) {
  const std::string them = " but device " + std::to_string(first_device) + " declares ";
  if (mine.name() != first.name()) {
    return "kernel '" + mine.name() + "'" + them + "kernel '" + first.name() + "'";
  }
  const auto a = mine.buffers(), b = first.buffers();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (a[i].dtype == b[i].dtype && a[i].shape == b[i].shape) continue;
    return "buffer " + std::to_string(i) + " as " + describe_buffer(a[i]) + them + "it as " +
           describe_buffer(b[i]);
  }
  if (a.size() != b.size()) {
    return std::to_string(a.size()) + " buffers" + them + std::to_string(b.size());
  }
  const auto count = [&](int mine_n, int first_n, const char* what) {
    return std::to_string(mine_n) + " " + what + them + std::to_string(first_n);
  };
  if (mine.semaphores() != first.semaphores()) {
    return count(mine.semaphores(), first.semaphores(), "semaphores");
  }
  if (mine.dma_semaphores() != first.dma_semaphores()) {
    return count(mine.dma_semaphores(), first.dma_semaphores(), "DMA semaphores");
  }
  const auto option = [&](const char* what, const std::string& mine_value,
                          const std::string& first_value) {
    return std::string(what) + " " + mine_value + them + what + " " + first_value;
  };
  const auto id = [](const KernelSpec& s) {
    return s.collective_id() ? std::to_string(*s.collective_id()) : std::string("none");
  };
  if (mine.collective_id() != first.collective_id()) {
    return option("collective id", id(mine), id(first));
  }
  const auto mode = [](const KernelSpec& s) {
    std::string text = copy_mode_name(s.copy_mode());
    if (s.copy_mode() == CopyMode::kRandom) {
      text += ':';  // appended: g++ 12 warns falsely on ":" + std::string
      text += std::to_string(s.copy_seed());
    }
    return text;
  };
  if (mode(mine) != mode(first)) return option("copy mode", mode(mine), mode(first));
  if (mine.race_detection() != first.race_detection()) {
    const auto on = [](bool b) { return std::string(b ? "on" : "off"); };
    return option("race detection", on(mine.race_detection()), on(first.race_detection()));
  }
  return {};
}

// " semaphore 0 holds 1; DMA semaphore 2 holds 4096": the
// semaphores of `shard` not back at 0.
std::string leftover_semaphores(const KernelShard& shard) {
  std::string out;
  for (int i = 0; i <= shard.barrier_cell(); ++i) {
    const uint32_t value = shard.cells[i].value();
    if (value == 0) continue;
    out += out.empty() ? " " : "; ";
    out += shard.cell_name(i);
    out += " holds ";
    out += std::to_string(value);
  }
  return out;
}

// Releases a claimed collective id when the kernel ends, however it ends.
struct CollectiveIdClaim {
  CollectiveIdClaim() = default;
  CollectiveIdClaim(const CollectiveIdClaim&) = delete;
  CollectiveIdClaim& operator=(const CollectiveIdClaim&) = delete;
  CollectiveIds* ids = nullptr;
  int id = 0;
  ~CollectiveIdClaim() {
    if (ids != nullptr) ids->release(id);
  }
};

// `error`, thrown on `device_id` in a kernel program labelled `label`, with
// the label in front (a meshsim::Error keeps its type; anything else becomes
// the DeviceError the launch would make of it).
std::exception_ptr labelled(std::exception_ptr error, int device_id, const std::string& label) {
  if (label.empty()) return error;
  error = attribute_error(device_id, std::move(error));
  try {
    std::rethrow_exception(error);
  } catch (Error& e) {
    e.add_context(label);
  }
  return error;
}

}  // namespace

KernelContext& KernelRun::free_context(DeviceState& device) {
  // Contexts form a stack by nesting depth: the first inactive one is free.
  size_t depth = 0;
  while (depth < device.kernel_contexts.size() &&
         device.kernel_contexts[depth]->active_.load(std::memory_order_relaxed)) {
    ++depth;
  }
  if (depth == device.kernel_contexts.size()) {
    device.kernel_contexts.emplace_back(new KernelContext(), [](KernelContext* k) { delete k; });
  }
  return *device.kernel_contexts[depth];
}

KernelWords& KernelRun::words(KernelContext& k) {
  if (!k.words_) k.words_ = std::make_unique<KernelWords>();
  return *k.words_;
}

void KernelRun::enter(KernelContext& k, DeviceContext& ctx, const KernelSpec& spec,
                      KernelGroup& group, KernelShard& shard, KernelAgent& agent, int position,
                      const KernelPrograms& programs, int program, const GroupRef& meeting) {
  k.device_ = &ctx;
  k.programs_ = &programs;
  k.program_ = program;
  k.meeting_ = &meeting;
  k.copy_mode_ = spec.copy_mode();
  k.has_collective_id_ = spec.collective_id().has_value();
  k.group_ = &group;
  k.shard_ = &shard;
  k.agent_ = &agent;
  k.position_ = position;
  k.name_ = spec.name();
  ++k.generation_;
  k.active_.store(true, std::memory_order_relaxed);
}

void KernelRun::run(DeviceContext& ctx, const KernelSpec& spec, const KernelPrograms& programs,
                    int program, FunctionRef<void(KernelContext&)> body) {
  DeviceHooks::check_usable(ctx, "run_kernel");
  const std::string label = programs.label(program);
  const std::string holder =
      "kernel '" + spec.name() + "' on " + DeviceHooks::runtime(ctx).describe(ctx.mesh());
  DeviceState& device = DeviceHooks::device(ctx);
  // Fails the launch with `error` (labelled) once no peer can touch this
  // device's buffers any more, and rethrows it.
  auto fail = [&](std::exception_ptr error) {
    error = labelled(std::move(error), device.id, label);
    if (!DeviceHooks::waiter(ctx).cancelled()) DeviceHooks::fail_and_settle(ctx, error);
    std::rethrow_exception(error);
  };
  Waiter& waiter = DeviceHooks::waiter(ctx);
  // A device that already settled in this launch (its body caught a
  // cancellation) must not meet: peers no longer wait for it, so what they
  // offer at the entry may be gone by the time it reads it.
  if (waiter.cancel_if_aborted()) {
    throw CancelledError("run_kernel of kernel '" + spec.name() + "' on device " +
                         std::to_string(device.id) + ": the launch failed and was cancelled");
  }
  const GroupRef group =
      DeviceHooks::group(ctx, AxisNames(ctx.mesh().abstract_mesh().axis_names()));
  Rendezvous& meeting = *group.rendezvous;
  const int position = group.rank;
  // The first function on a device makes its shard; the others on it (an
  // mpmd_map's programs that share the device) use that one.
  const bool owns_shard = programs.owner_of(position) == position;
  const bool shared_shards = !programs.shard_owner.empty();

  CollectiveIdClaim claim;
  KernelContext& kernel = KernelRun::free_context(device);
  std::unique_ptr<KernelShard> shard;
  std::optional<KernelAgent> agent;
  try {
    if (position == 0 && spec.collective_id()) {
      CollectiveIds& ids = DeviceHooks::runtime(ctx).collective_ids();
      ids.claim(*spec.collective_id(), holder);
      claim.ids = &ids;  // not by assignment: a temporary's destructor would release it
      claim.id = *spec.collective_id();
    }
    agent.emplace(spec, meeting.size(), position);
    if (owns_shard) {
      shard = std::make_unique<KernelShard>(spec, words(kernel));
      if (DeviceHooks::stamped(ctx)) {
        shard->stamps = std::make_unique<ShardStamps>(shard->barrier_cell() + 1);
      }
    }
  } catch (...) {
    // No body ran yet: the launch fails as for any device error.
    std::rethrow_exception(labelled(std::current_exception(), device.id, label));
  }
  // The table through which the devices find each other's shards, and the
  // race detector: position 0 makes it, every device holds it, the last to
  // leave frees it (copies in flight still land after the exit meeting).
  std::shared_ptr<KernelGroup> kernel_group;
  if (position == 0) {
    kernel_group = std::make_shared<KernelGroup>(meeting.size());
    if (spec.race_detection()) {
      std::vector<int> devices, program_of;
      for (int p = 0; p < meeting.size(); ++p) {
        devices.push_back(programs.device_at(p));
        if (shared_shards) program_of.push_back(programs.program_at(p));
      }
      kernel_group->races =
          std::make_unique<RaceDetector>(spec.name(), std::move(devices), std::move(program_of));
    }
  }

  // The specs are compared after the meeting (spec_difference), which names
  // the kernel and what differs.
  CollectiveCall entry("run_kernel", DType::kFloat32, {});
  entry.has_operand = false;
  const EntryOffer offer{&kernel_group, &spec};
  try {
    OpScope scope(ctx, "run_kernel (entry)", group);
    meeting.slot(position).publish(entry, nullptr, nullptr, position == 0 ? &offer : nullptr);
    meeting.meet(position, waiter);
    if (position != 0) {
      const EntryOffer& first = *static_cast<const EntryOffer*>(meeting.slot(0).extra);
      const std::string difference = spec_difference(spec, *first.spec, programs.device_at(0));
      if (!difference.empty()) {
        throw CollectiveMismatchError("collective mismatch in " + holder + ": device " +
                                      std::to_string(device.id) + " declares " + difference);
      }
      kernel_group = *first.group;
    }
    kernel_group->shards[position] = shard.get();  // null unless it owns one
    meeting.arrive(position, waiter);  // every shard is in the table
    if (shared_shards) {
      if (!owns_shard) {
        kernel_group->shards[position] = kernel_group->shards[programs.owner_of(position)];
      }
      meeting.arrive(position, waiter);  // and at every position of its device
    }
  } catch (...) {
    // No body ran yet: the launch fails as for any device error.
    std::rethrow_exception(labelled(std::current_exception(), device.id, label));
  }

  KernelRun::enter(kernel, ctx, spec, *kernel_group, *kernel_group->shards[position], *agent,
                   position, programs, program, group);
  try {
    body(kernel);
    kernel.finish_reads();  // no copy in flight may read a source after the exit meeting
  } catch (...) {
    kernel.active_.store(false, std::memory_order_relaxed);
    // Peers may still copy into this device's buffers: fail the launch and
    // free them only once none can (a cancelled wait already waited so).
    fail(std::current_exception());
  }

  CollectiveCall exit_call("run_kernel (exit)", DType::kFloat32, {});
  exit_call.has_operand = false;
  try {
    OpScope scope(ctx, "run_kernel (exit)", group);
    meeting.slot(position).publish(exit_call, nullptr, nullptr);
    meeting.meet(position, waiter);
  } catch (...) {
    kernel.active_.store(false, std::memory_order_relaxed);
    fail(std::current_exception());
  }
  kernel.active_.store(false, std::memory_order_relaxed);
  // Only the shard's owner touches it from here on (then frees it): the
  // device's other functions leave.
  if (!owns_shard) return;
  // Every device has left its body: nobody starts a copy or signals any
  // more; what is in flight to this device lands now.
  kernel.finish_writes();
  const std::string leftover = leftover_semaphores(*shard);
  if (!leftover.empty()) {
    SemaphoreError error(holder + " exited with semaphores of device " + std::to_string(device.id) +
                         " not back at 0:" + leftover);
    if (!label.empty()) error.add_context(label);
    throw error;
  }
}

void run_kernel_program(DeviceContext& ctx, const KernelSpec& spec, const KernelPrograms& programs,
                        int program, FunctionRef<void(KernelContext&)> body) {
  KernelRun::run(ctx, spec, programs, program, body);
}

namespace detail {

void run_kernel(DeviceContext& ctx, const KernelSpec& spec, void* body,
                void (*call)(void* body, KernelContext& kernel)) {
  DeviceHooks::check_usable(ctx, "run_kernel");  // before ctx.mesh(), which needs a usable context
  KernelPrograms one{{KernelProgram{&ctx.mesh(), 0}}, false, {}};
  // Inside an mpmd_map body on its launch mesh, whose further cores of a
  // device share its memory here too.
  const RuntimeImpl& runtime = DeviceHooks::runtime(ctx);
  if (DeviceHooks::mesh_state(ctx).id_bound() > runtime.num_devices()) {
    one.agent_stride = runtime.num_devices();
    std::unordered_map<int, int> first;  // device -> its first position
    for (int p = 0; p < ctx.mesh().size(); ++p) {
      const int device = runtime.device_of(ctx.mesh().device_at(p));
      one.shard_owner.push_back(first.try_emplace(device, p).first->second);
    }
  }
  KernelRun::run(ctx, spec, one, 0, [&](KernelContext& kernel) { call(body, kernel); });
}

}  // namespace detail
}  // namespace meshsim
