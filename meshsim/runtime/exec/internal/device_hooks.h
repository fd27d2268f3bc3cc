#pragma once
// The hooks collectives are built on, kept out of the public DeviceContext:
// the device's group over some axes, its waiter, and the scope that marks the
// operation it is in for deadlock and timeout reports and traces it.

#include <exception>
#include <type_traits>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/comm/internal/link.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/internal/waiter.h"
#include "meshsim/runtime/time/internal/launch_time.h"
#include "meshsim/runtime/trace/internal/device_trace.h"

namespace meshsim {

class RuntimeImpl;

struct DeviceHooks {
  // This device's group over `axes` (and axis_index_groups). Cached per device:
  // a hit takes no lock and allocates nothing. group() and waiter() throw
  // RuntimeUsageError when the context is used outside its launch
  // (DeviceContext).
  static GroupRef group(DeviceContext& ctx, const AxisNames& axes,
                        const AxisIndexGroups& index_groups = {});
  static Waiter& waiter(DeviceContext& ctx);
  // The runtime the device belongs to.
  static RuntimeImpl& runtime(DeviceContext& ctx);
  // The device's own error inside a collective whose peers may still touch
  // its buffers in place: fails the launch and returns once no peer can
  // (Launch::fail_and_settle); the caller then rethrows. Not for a
  // CancelledError of a wait (that one already settled).
  static void fail_and_settle(DeviceContext& ctx, std::exception_ptr error);
  // Appends `make()`, a CollectiveRecord, to the device's collective records
  // of this launch (bounded: past DeviceContext::kMaxCollectiveRecords it is
  // counted as dropped) and to the open trace event. make() runs only when
  // the record is kept or traced: a loop of collectives fills the records
  // early, and making each record only to drop it was 3 % of an 8-byte psum.
  template <class Make>
    requires std::is_invocable_r_v<CollectiveRecord, Make&>
  static void record(DeviceContext& ctx, Make&& make) {
    DeviceState& device = ctx.device_;
    if (device.records.size() >= DeviceContext::kMaxCollectiveRecords && !device.trace.on()) {
      ++device.records_dropped;
      return;
    }
    add_record(ctx, make());
  }
  // record()'s part once the record is made: keeps it while there is room
  // (else counts it dropped) and puts it in the open trace event.
  static void add_record(DeviceContext& ctx, const CollectiveRecord& record);
  static DeviceState& device(DeviceContext& ctx) { return ctx.device_; }
  // The runtime's copy of the launch's mesh. Unchecked: after check_usable.
  static const MeshState& mesh_state(DeviceContext& ctx);
  // RuntimeUsageError naming `what` unless called from the device's own
  // launch body (DeviceContext).
  static void check_usable(DeviceContext& ctx, const char* what) { ctx.check_usable(what); }
  // The device's virtual clock (DeviceClock::on() says whether the launch
  // keeps time). Unchecked: for collectives, which checked the context when
  // they looked up their group or waiter.
  static DeviceClock& clock(DeviceContext& ctx) { return ctx.device_.clock; }
  // waiter() unchecked, as clock(): for a collective's meetings, whose group
  // lookup checked the context (a check per wait was 2 % of an 8-byte psum).
  static Waiter& group_waiter(DeviceContext& ctx) { return ctx.device_.waiter; }
  // The device's event recorder (DeviceTrace::on() says whether the launch
  // traces). Unchecked, as clock().
  static DeviceTrace& trace(DeviceContext& ctx) { return ctx.device_.trace; }
  // Whether transfers carry a LinkStamp: the launch keeps virtual time or
  // traces (every device of a launch alike, so sender and receiver agree).
  static bool stamped(DeviceContext& ctx) {
    return ctx.device_.clock.on() || ctx.device_.trace.on();
  }
  // The stamp of a transfer that begins now (none unless stamped()): the
  // device's clock and, when the sender's event `sent` was recorded, a fresh
  // flow id, which becomes the event's flow_out (so no receiver holds a flow
  // whose send was dropped).
  static std::optional<LinkStamp> stamp(DeviceContext& ctx, RawTraceEvent* sent) {
    if (!stamped(ctx)) return std::nullopt;
    LinkStamp stamp{ctx.device_.clock.departure(), 0};
    if (sent != nullptr) sent->flow_out = stamp.flow = ctx.device_.trace.new_flow();
    return stamp;
  }
};

// Records an operation of `kind` named `op` over `group` as a trace event
// for as long as it lives, when the launch traces (one branch otherwise).
// A collective's event is the one the algorithm choice describes
// (DeviceHooks::record). Scopes nest (LIFO) on the device's own thread.
class TraceScope {
 public:
  TraceScope(DeviceContext& ctx, TraceKind kind, const char* op, const GroupRef& group)
      : device_(DeviceHooks::device(ctx)), kind_(kind) {
    if (device_.trace.on()) open(op, group);
  }
  ~TraceScope() {
    if (traced_) close();
  }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

  // The event, to describe it further; null when the launch does not trace
  // (or the device's trace is full).
  RawTraceEvent* event() { return traced_ ? device_.trace.event(event_) : nullptr; }

 private:
  void open(const char* op, const GroupRef& group);
  void close();

  DeviceState& device_;
  bool traced_ = false;
  TraceKind kind_;
  int event_ = DeviceTrace::kDropped;
  int outer_collective_ = DeviceTrace::kDropped;  // restored when the scope ends
};

// Marks the operation a device is in (a collective, or psend / precv with
// kind kTransfer) over `group`, for deadlock / timeout reports, and traces it.
class OpScope {
 public:
  OpScope(DeviceContext& ctx, const char* op, const GroupRef& group,
          TraceKind kind = TraceKind::kCollective);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

  RawTraceEvent* event() { return trace_.event(); }  // see TraceScope

 private:
  DeviceState& device_;
  TraceScope trace_;
};

}  // namespace meshsim
