#pragma once
// The argument checks shared by the collectives, so they all word errors
// alike ("<op> over <axes>: ...") and throw the same type for a defect.

#include <cstdint>
#include <span>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim::detail {

// This device's group for the collective `op` over `axes` (DeviceHooks::group).
// An UnknownAxisError, DuplicateAxisError or GroupError from the lookup is
// rethrown, type kept, with "<op> over <axes>: " in front of its message.
GroupRef group_for(DeviceContext& ctx, const AxisNames& axes, const AxisIndexGroups& index_groups,
                   const char* op);

// `axis` in [0, rank), counting from the end when negative, as JAX's
// canonicalize_axis. Otherwise CollectiveShapeError naming the collective, its
// axes, the parameter, its value, the valid range and x's shape. `rank` is the
// rank the parameter indexes (x.rank() + 1 for the new dimension of a stacking
// all_gather).
// A non-negative axis in range returns inline (the call's set-up cost more
// than the check, twice per all_to_all).
int canonicalize_other_axis(int axis, int rank, const char* param, const char* op,
                            const AxisNames& axes, std::span<const int64_t> shape);
inline int canonicalize_axis(int axis, int rank, const char* param, const char* op,
                             const AxisNames& axes, std::span<const int64_t> shape) {
  if (axis >= 0 && axis < rank) return axis;
  return canonicalize_other_axis(axis, rank, param, op, axes, shape);
}

// GroupError, prefixed with "<op> over <axes>: ", unless every group of `set`
// has the same number of members (JAX requires it of all_gather,
// psum_scatter, all_to_all, ragged_all_to_all).
void require_equal_group_sizes(const DeviceContext& ctx, const GroupSet& set, const char* op);

// `dim * n` (a gathered dimension); CollectiveShapeError naming the
// collective, its axes and x's shape if it exceeds int64_t, so an overflow
// can never become a wrong result shape.
int64_t gathered_dim(int64_t dim, int n, const char* op, const AxisNames& axes,
                     std::span<const int64_t> shape);
// CollectiveShapeError naming the collective, its axes, x's shape and `out`
// unless an array of shape `out` and `dtype` has at most 2^63 - 1 bytes.
void check_result_shape(std::span<const int64_t> out, DType dtype, const char* op,
                        const AxisNames& axes, std::span<const int64_t> shape);

}  // namespace meshsim::detail
