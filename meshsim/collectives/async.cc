#include "meshsim/collectives/async.h"

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"

namespace meshsim {

Array Pending::done() {
  if (!result_) {
    throw RuntimeUsageError(std::string(op_) +
                            "_done called twice on the same handle (or on a handle moved from)");
  }
  if (ctx_ != nullptr) {
    // The context is only touched while its launch runs (the Runtime is
    // alive then); a handle kept past the launch must not move a later
    // launch's clock.
    if (launch_.expired()) {
      throw RuntimeUsageError(std::string(op_) + "_done called after the launch of its " +
                              op_ + "_start ended");
    }
    DeviceHooks::check_usable(*ctx_, "Pending::done");  // from anywhere but the device's own body
    DeviceClock& clock = DeviceHooks::clock(*ctx_);
    const double before = clock.now;
    clock.join(end_);
    DeviceTrace& trace = DeviceHooks::trace(*ctx_);
    if (trace.on()) trace.instant(TraceKind::kWait, op_, before, clock.now);  // "<op>_done"
  }
  Array result = std::move(*result_);
  result_.reset();
  return result;
}

namespace {

// Runs `collective` as a start: on a clock of its own when the launch keeps
// virtual time (see async.h).
template <class Collective>
Pending start(DeviceContext& ctx, const char* op, Collective collective) {
  DeviceHooks::check_usable(ctx, op);  // outside the device's launch body
  const double begin = DeviceHooks::clock(ctx).now;
  // The start's events are marked async in a trace (they may overlap later ones).
  struct InStart {
    DeviceTrace& trace;
    bool outer;
    ~InStart() { trace.in_start = outer; }
  } in_start{DeviceHooks::trace(ctx), DeviceHooks::trace(ctx).in_start};
  in_start.trace.in_start = in_start.trace.on();
  DeviceClock& clock = DeviceHooks::clock(ctx);
  if (!clock.on()) return Pending(collective(), op);
  struct Restore {
    DeviceClock& clock;
    double begin;
    ~Restore() { clock.now = begin; }
  } restore{clock, begin};
  Array result = collective();
  return Pending(std::move(result), op, ctx, clock.time->devices_token(), clock.now);
}

}  // namespace

Pending psum_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                   const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  return start(ctx, "psum", [&] { return psum(ctx, x, axes, axis_index_groups, algorithm); });
}

Pending all_gather_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                         const AllGatherOptions& options) {
  return start(ctx, "all_gather", [&] { return all_gather(ctx, x, axes, options); });
}

Pending psum_scatter_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                           const PsumScatterOptions& options) {
  return start(ctx, "psum_scatter", [&] { return psum_scatter(ctx, x, axes, options); });
}

Pending all_to_all_start(DeviceContext& ctx, const Array& x, const AxisNames& axes, int split_axis,
                         int concat_axis, const AllToAllOptions& options) {
  return start(ctx, "all_to_all",
               [&] { return all_to_all(ctx, x, axes, split_axis, concat_axis, options); });
}

Pending pbroadcast_start(DeviceContext& ctx, const Array& x, const AxisNames& axes, int source,
                         std::string_view algorithm) {
  return start(ctx, "pbroadcast", [&] { return pbroadcast(ctx, x, axes, source, algorithm); });
}

Pending ppermute_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                       ArgSpan<std::pair<int, int>> perm) {
  return start(ctx, "ppermute", [&] { return ppermute(ctx, x, axes, perm); });
}

}  // namespace meshsim
