#pragma once
// The hooks collectives are built on, kept out of the public DeviceContext:
// the device's group over some axes, its waiter, and the scope that marks the
// operation it is in for deadlock and timeout reports.

#include <exception>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/waiter.h"
#include "meshsim/runtime/time/internal/launch_time.h"

namespace meshsim {

class RuntimeImpl;

struct DeviceHooks {
  // This device's group over `axes` (and axis_index_groups). Cached per device:
  // a hit takes no lock and allocates nothing. group() and waiter() throw
  // RuntimeUsageError when the context is used outside its launch
  // (DeviceContext).
  static GroupRef group(DeviceContext& ctx, AxisNames axes,
                        const AxisIndexGroups& index_groups = {});
  static Waiter& waiter(DeviceContext& ctx);
  // The runtime the device belongs to.
  static RuntimeImpl& runtime(DeviceContext& ctx);
  // The device's own error inside a collective whose peers may still touch
  // its buffers in place: fails the launch and returns once no peer can
  // (Launch::fail_and_settle); the caller then rethrows. Not for a
  // CancelledError of a wait (that one already settled).
  static void fail_and_settle(DeviceContext& ctx, std::exception_ptr error);
  // Appends to the device's collective records of this launch (bounded).
  static void record(DeviceContext& ctx, const CollectiveRecord& record);
  static DeviceState& device(DeviceContext& ctx) { return ctx.device_; }
  // The device's virtual clock (DeviceClock::on() says whether the launch
  // keeps time). Unchecked: for collectives, which checked the context when
  // they looked up their group or waiter.
  static DeviceClock& clock(DeviceContext& ctx);
};

// Marks the collective a device is in, for deadlock / timeout reports.
class OpScope {
 public:
  OpScope(DeviceContext& ctx, const char* op, const Rendezvous* group);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  DeviceState& device_;
};

}  // namespace meshsim
