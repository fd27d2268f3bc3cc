#include "meshsim/runtime/exec/device_context.h"

#include <sched.h>

#include "meshsim/runtime/exec/internal/current_device.h"
#include "meshsim/runtime/exec/internal/fiber/fiber.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/launch.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim {

bool DeviceContext::usable() const {
  // The device's own code (its thread, or its fiber) runs user code only
  // inside a launch body, so there the context is live; anyone else (a host
  // thread that kept it past the launch, or another device) must not even
  // read launch_.
  return current_device() == &device_ && launch_ != nullptr;
}

void DeviceContext::throw_unusable(const std::string& what) const {
  throw RuntimeUsageError(what + " of " + device_.name() +
                          " called outside that device's launch (from another thread, or after "
                          "the launch returned): a DeviceContext is valid only in the body it "
                          "was passed to, on its device's thread");
}

void DeviceContext::yield() const {
  check_usable("DeviceContext::yield");
  if (device_.waiter.cancel_if_aborted()) {
    throw CancelledError("DeviceContext::yield of " + device_.name() +
                         ": the launch failed and was cancelled");
  }
  if (Fiber* fiber = Fiber::current()) {
    fiber->yield();
  } else {
    sched_yield();
  }
}

int DeviceContext::device_id() const {
  check_usable("DeviceContext::device_id");
  return device_.id;
}
int DeviceContext::position() const {
  check_usable("DeviceContext::position");
  return position_;
}
const Mesh& DeviceContext::mesh() const {
  check_usable("DeviceContext::mesh");
  return launch_->mesh().mesh();
}
std::span<const int> DeviceContext::coords() const {
  check_usable("DeviceContext::coords");
  return launch_->mesh().coords(position_);
}

int DeviceContext::axis_index(const AxisNames& axes) const {
  check_usable("DeviceContext::axis_index");
  const AbstractMesh& shape = launch_->mesh().mesh().abstract_mesh();
  const auto c = launch_->mesh().coords(position_);
  int index = 0;
  for (std::string_view name : axes.names()) {
    const int axis = shape.axis_position(name);
    index = index * shape.axis_sizes()[axis] + c[axis];
  }
  // Validates repetitions the same way group lookups do.
  if (axes.size() > 1) (void)axis_size(axes);
  return index;
}

int DeviceContext::axis_size(const AxisNames& axes) const {
  check_usable("DeviceContext::axis_size");
  const auto names = axes.to_vector();
  return meshsim::axis_size(launch_->mesh().mesh().abstract_mesh(), names);
}

std::span<const CollectiveRecord> DeviceContext::collective_records() const {
  check_usable("collective_records()");
  return device_.records;
}

size_t DeviceContext::dropped_collective_records() const {
  check_usable("dropped_collective_records()");
  return device_.records_dropped;
}

void DeviceHooks::add_record(DeviceContext& ctx, const CollectiveRecord& record) {
  DeviceState& device = ctx.device_;
  if (device.records.size() < DeviceContext::kMaxCollectiveRecords) {
    device.records.push_back(record);
  } else {
    ++device.records_dropped;
  }
  if (device.trace.on()) {
    if (RawTraceEvent* e = device.trace.event(device.trace.open_collective)) {
      e->algorithm = record.algorithm;  // the registry's: outlives the launch
      e->chosen_by = record.chosen_by;
      e->bytes = static_cast<int64_t>(record.bytes);
    }
  }
}

void DeviceHooks::fail_and_settle(DeviceContext& ctx, std::exception_ptr error) {
  ctx.launch_->fail_and_settle(ctx.device_, std::move(error));
}

RuntimeImpl& DeviceHooks::runtime(DeviceContext& ctx) { return ctx.device_.runtime; }
const MeshState& DeviceHooks::mesh_state(DeviceContext& ctx) { return ctx.launch_->mesh(); }

Waiter& DeviceHooks::waiter(DeviceContext& ctx) {
  ctx.check_usable("a wait");
  return ctx.device_.waiter;
}

namespace {

// The product of the sizes of `axes` in `mesh`; 0 if one is not a mesh axis
// (the group lookup reports it).
int combined_size(const AbstractMesh& mesh, const AxisNames& axes) {
  int size = 1;
  for (std::string_view name : axes.names()) {
    const std::optional<int> axis = mesh.find_axis(name);
    if (!axis) return 0;
    size *= mesh.axis_sizes()[*axis];
  }
  return size;
}

// No axis_index_groups. At namespace scope: constant-initialized, so reading
// it costs no guard check, as a function's static would on every lookup.
constinit const AxisIndexGroups kNoIndexGroups;

}  // namespace

GroupRef DeviceHooks::group(DeviceContext& ctx, const AxisNames& axes,
                           const AxisIndexGroups& given_groups) {
  if (!ctx.usable()) ctx.throw_unusable("a collective over " + axes.to_string());
  // One group of the whole axis is the grouping of none: one rendezvous.
  const AxisIndexGroups& index_groups =
      given_groups.size() == 1 &&
              is_one_whole_group(given_groups,
                                 combined_size(ctx.launch_->mesh().mesh().abstract_mesh(), axes))
          ? kNoIndexGroups
          : given_groups;
  DeviceState& device = ctx.device_;
  MeshState& mesh = ctx.launch_->mesh();
  DeviceState::CachedMesh* cached = device.last_mesh_id == mesh.id() ? device.last_mesh : nullptr;
  bool inserted = false;
  if (cached == nullptr) {
    const auto found = device.group_cache.try_emplace(mesh.id());
    inserted = found.second;
    cached = &found.first->second;
    device.last_mesh_id = mesh.id();
    device.last_mesh = cached;  // never the entry evicted below
    cached->last_use = ++device.group_cache_clock;
  }
  for (const auto& entry : cached->groups) {
    if (axes.equals(entry.ref.set->axes) && *entry.index_groups == index_groups) return entry.ref;
  }
  ++device.group_cache_misses;
  if (inserted && device.group_cache.size() > Runtime::kMaxInternedMeshes) {
    auto oldest = device.group_cache.end();
    for (auto candidate = device.group_cache.begin(); candidate != device.group_cache.end();
         ++candidate) {
      if (&candidate->second != cached &&
          (oldest == device.group_cache.end() ||
           candidate->second.last_use < oldest->second.last_use)) {
        oldest = candidate;
      }
    }
    device.group_cache.erase(oldest);
  }
  GroupRef ref = mesh.group(axes, index_groups, ctx.position_);
  // Bounded: a device that uses many groups of one mesh keeps only the recent.
  constexpr size_t kMaxCachedGroups = 64;
  if (cached->groups.size() >= kMaxCachedGroups) cached->groups.clear();
  cached->groups.push_back({&ref.set->index_groups, ref});
  return ref;
}

void TraceScope::open(const char* op, const GroupRef& group) {
  DeviceTrace& trace = device_.trace;
  event_ = trace.open(kind_, op, device_.clock.now);
  traced_ = true;
  if (RawTraceEvent* e = trace.event(event_)) {
    e->axes = &group.set->axes;
    e->group_size = group.rendezvous->size();
  }
  if (kind_ == TraceKind::kCollective) {
    outer_collective_ = trace.open_collective;
    trace.open_collective = event_;
  }
}

void TraceScope::close() {
  device_.trace.close(event_, device_.clock.now);
  if (kind_ == TraceKind::kCollective) device_.trace.open_collective = outer_collective_;
}

OpScope::OpScope(DeviceContext& ctx, const char* op, const GroupRef& group, TraceKind kind)
    : device_(DeviceHooks::device(ctx)), trace_(ctx, kind, op, group) {
  device_.current_group.store(group.rendezvous, std::memory_order_relaxed);
  device_.current_op.store(op, std::memory_order_release);
}

OpScope::~OpScope() {
  device_.current_op.store(nullptr, std::memory_order_release);
  // The group belongs to a MeshState that may be evicted after this launch: a
  // later report must not find it.
  device_.current_group.store(nullptr, std::memory_order_relaxed);
  // Only the device writes it (others read it for reports): a load and a
  // store, not a locked add, which cost 5 % of an 8-byte call.
  device_.collectives_done.store(device_.collectives_done.load(std::memory_order_relaxed) + 1,
                                 std::memory_order_relaxed);
}

}  // namespace meshsim
