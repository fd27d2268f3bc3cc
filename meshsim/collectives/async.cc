#include "meshsim/collectives/async.h"

#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

Array Pending::done() {
  if (!result_) {
    throw RuntimeUsageError(std::string(op_) + "_done called twice on the same handle");
  }
  Array result = std::move(*result_);
  result_.reset();
  return result;
}

Pending psum_start(DeviceContext& ctx, const Array& x, AxisNames axes,
                   const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  return Pending(psum(ctx, x, axes, axis_index_groups, algorithm), "psum");
}

Pending all_gather_start(DeviceContext& ctx, const Array& x, AxisNames axes,
                         const AllGatherOptions& options) {
  return Pending(all_gather(ctx, x, axes, options), "all_gather");
}

Pending psum_scatter_start(DeviceContext& ctx, const Array& x, AxisNames axes,
                           const PsumScatterOptions& options) {
  return Pending(psum_scatter(ctx, x, axes, options), "psum_scatter");
}

Pending all_to_all_start(DeviceContext& ctx, const Array& x, AxisNames axes, int split_axis,
                         int concat_axis, const AllToAllOptions& options) {
  return Pending(all_to_all(ctx, x, axes, split_axis, concat_axis, options), "all_to_all");
}

Pending pbroadcast_start(DeviceContext& ctx, const Array& x, AxisNames axes, int source,
                         std::string_view algorithm) {
  return Pending(pbroadcast(ctx, x, axes, source, algorithm), "pbroadcast");
}

Pending ppermute_start(DeviceContext& ctx, const Array& x, AxisNames axes,
                       ArgSpan<std::pair<int, int>> perm) {
  return Pending(ppermute(ctx, x, axes, perm), "ppermute");
}

}  // namespace meshsim
