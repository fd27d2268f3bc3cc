#pragma once
// jax.lax.psum_scatter: psum(x) over the group, of which each member keeps
// only its own part along `scatter_dimension`: the part whose index is its
// rank (axis index over `axes`, or position in its axis_index_group).
//
// Stacked (tiled = false): x.shape[scatter_dimension] must equal the group
//   size; the result is psum(x)[..., rank, ...] with that dimension removed.
// Tiled: x.shape[scatter_dimension] must be divisible by the group size; the
//   result is the rank-th of group_size equal blocks of psum(x) along it.
// The sum follows psum exactly (collectives/reduction.h): rank order, float16 /
// bfloat16 accumulate in float32, integers wrap, bool counts into int32. So a
// part is bitwise equal to the same slice of psum(x).
//
// Errors, on the device that passed the argument, each naming the collective:
// CollectiveShapeError for a scatter_dimension out of range or a dimension
// that does not fit the group; GroupError for axis_index_groups that do not
// cover every axis index once or differ in size; UnknownAxisError /
// DuplicateAxisError for an unknown or repeated axis. Members that disagree on
// dtype, shape, scatter_dimension or tiled get CollectiveMismatchError.

#include <string>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

struct PsumScatterOptions {
  int scatter_dimension = 0;
  bool tiled = false;
  AxisIndexGroups axis_index_groups = {};
  // How it runs: "" for the runtime's choice, "auto", or a name of
  // algorithms/registry.h.
  std::string algorithm = {};
};

Array psum_scatter(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                   const PsumScatterOptions& options = {});

}  // namespace meshsim
