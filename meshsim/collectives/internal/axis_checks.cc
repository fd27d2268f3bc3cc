#include "meshsim/collectives/internal/axis_checks.h"

#include <optional>
#include <string>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/dimension.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"

namespace meshsim::detail {
namespace {

std::string prefix(const char* op, const AxisNames& axes) {
  return std::string(op) + " over " + axes.to_string();
}

}  // namespace

GroupRef group_for(DeviceContext& ctx, const AxisNames& axes, const AxisIndexGroups& index_groups,
                   const char* op) {
  try {
    return DeviceHooks::group(ctx, axes, index_groups);
  } catch (AxisError& e) {
    e.add_context(prefix(op, axes));
    throw;
  } catch (GroupError& e) {
    e.add_context(prefix(op, axes));
    throw;
  }
}

int canonicalize_other_axis(int axis, int rank, const char* param, const char* op,
                            const AxisNames& axes, std::span<const int64_t> shape) {
  if (const std::optional<int> dim = canonical_dimension(axis, rank)) return *dim;
  throw CollectiveShapeError(prefix(op, axes) + ": " + param + "=" + std::to_string(axis) +
                             " is out of range [" + std::to_string(-rank) + ", " +
                             std::to_string(rank) + ") for x of shape " + shape_to_string(shape));
}

void require_equal_group_sizes(const DeviceContext& ctx, const GroupSet& set, const char* op) {
  if (set.equal_sizes) return;
  // The mesh layer words the complaint (which group differs from group 0).
  try {
    validate_axis_index_groups(ctx.mesh().abstract_mesh(), set.axes, set.index_groups,
                               /*require_equal_sizes=*/true);
  } catch (GroupError& e) {
    e.add_context(prefix(op, AxisNames(set.axes)));
    throw;
  }
}

int64_t gathered_dim(int64_t dim, int n, const char* op, const AxisNames& axes,
                     std::span<const int64_t> shape) {
  int64_t product = 0;
  if (__builtin_mul_overflow(dim, static_cast<int64_t>(n), &product)) {
    throw CollectiveShapeError(prefix(op, axes) + ": the result for x of shape " +
                               shape_to_string(shape) + " would have a dimension of " +
                               std::to_string(dim) + " * " + std::to_string(n) +
                               ", more than 2^63 - 1");
  }
  return product;
}

void check_result_shape(std::span<const int64_t> out, DType dtype, const char* op,
                        const AxisNames& axes, std::span<const int64_t> shape) {
  int64_t bytes = static_cast<int64_t>(dtype_size(dtype));
  bool zero = false;
  bool overflow = false;
  for (int64_t d : out) {
    zero = zero || d == 0;
    overflow = overflow || __builtin_mul_overflow(bytes, d, &bytes);
  }
  if (overflow && !zero) {
    throw CollectiveShapeError(prefix(op, axes) + ": the result for x of shape " +
                               shape_to_string(shape) + " would have shape " +
                               shape_to_string(out) + ", more than 2^63 - 1 bytes");
  }
}

}  // namespace meshsim::detail
