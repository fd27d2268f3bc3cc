#pragma once
// The argument checks shared by the collectives that take positional axes and
// need groups of equal size (all_gather, psum_scatter, all_to_all,
// pswapaxes), so they all word errors alike.

#include <cstdint>
#include <span>

#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim::detail {

// `axis` in [0, rank), counting from the end when negative, as JAX's
// canonicalize_axis. Otherwise ShapeError naming the collective, its axes,
// the parameter, its value, the valid range and x's shape. `rank` is the rank
// the parameter indexes (x.rank() + 1 for the new dimension of a stacking
// all_gather).
int canonicalize_axis(int axis, int rank, const char* param, const char* op, AxisNames axes,
                      std::span<const int64_t> shape);

// GroupError, prefixed with `op`, unless every group of `set` has the same
// number of members (JAX requires it of all_gather, psum_scatter, all_to_all).
void require_equal_group_sizes(const DeviceContext& ctx, const GroupSet& set, const char* op);

}  // namespace meshsim::detail
