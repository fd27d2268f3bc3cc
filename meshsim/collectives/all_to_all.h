#pragma once
// jax.lax.all_to_all and jax.lax.pswapaxes: a block transpose between one
// positional dimension of x and the group. Ranks are axis indices over
// `axes`, or positions in an axis_index_group.
//
// all_to_all cuts x along split_axis into group_size equal chunks and sends
// chunk j to rank j; each member puts the chunks it receives, in sender rank
// order, along concat_axis.
// Tiled: x.shape[split_axis] must be divisible by the group size; the output
//   has split_axis divided and concat_axis multiplied by the group size.
// Stacked (tiled = false): x.shape[split_axis] must equal the group size; the
//   output shape is x.shape with split_axis deleted and a dimension of size
//   group_size inserted at concat_axis (both index x.rank() dimensions), and
//   out[..., s at concat_axis, ...] = x of rank s at [..., my rank at
//   split_axis, ...].
//
// pswapaxes(x, axes, axis) is all_to_all(x, axes, axis, axis) stacked, as in
// JAX: x.shape[axis] must equal the group size, and the output, of x's shape,
// holds at index s along `axis` the slice of rank s's x at my rank. It runs
// on the all_to_all algorithms; `algorithm` chooses one as
// AllToAllOptions::algorithm does.
//
// Errors, on the device that passed the argument, each naming the collective:
// CollectiveShapeError for an axis out of range, a split dimension that does
// not fit the group or a concat dimension whose product with the group size
// overflows int64; GroupError for axis_index_groups that do not cover every
// axis index once or differ in size; UnknownAxisError / DuplicateAxisError for
// an unknown or repeated axis. Members that disagree on dtype, shape, axes
// arguments or tiled get CollectiveMismatchError.

#include <string>
#include <string_view>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

struct AllToAllOptions {
  bool tiled = false;
  AxisIndexGroups axis_index_groups = {};
  // How it runs: "" for the runtime's choice, "auto", or a name of
  // algorithms/registry.h.
  std::string algorithm = {};
};

Array all_to_all(DeviceContext& ctx, const Array& x, const AxisNames& axes, int split_axis,
                 int concat_axis, const AllToAllOptions& options = {});

Array pswapaxes(DeviceContext& ctx, const Array& x, const AxisNames& axes, int axis,
                const AxisIndexGroups& axis_index_groups = {}, std::string_view algorithm = {});

}  // namespace meshsim
