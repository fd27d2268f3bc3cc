#pragma once
// jax.lax.all_gather: every member of a group receives the inputs of all
// members, in rank order (the axis index over `axes`, or the position in its
// axis_index_group: with groups [[0, 2], [3, 1]], axis index 3 comes first in
// its group). Every member receives bitwise identical results.
//
// Stacked (tiled = false): the output has a new dimension of size group_size
//   at `axis`, which indexes x.rank() + 1 dimensions (-1: a new last dim).
// Tiled: the inputs are concatenated along the existing dimension `axis`,
//   which becomes group_size times longer.
//
// Errors, on the device that passed the argument, each naming the collective:
// CollectiveShapeError for an `axis` out of range or a result whose gathered
// dimension or byte size would overflow int64; GroupError for
// axis_index_groups that do not cover every axis index once or differ in
// size; UnknownAxisError / DuplicateAxisError for an unknown or repeated axis.
// Members that disagree on dtype, shape, axis or tiled get
// CollectiveMismatchError.

#include <string>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

struct AllGatherOptions {
  int axis = 0;
  bool tiled = false;
  AxisIndexGroups axis_index_groups = {};
  // How it runs: "" for the runtime's choice, "auto", or a name of
  // algorithms/registry.h.
  std::string algorithm = {};
};

Array all_gather(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                 const AllGatherOptions& options = {});

}  // namespace meshsim
