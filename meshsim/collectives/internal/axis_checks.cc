#include "meshsim/collectives/internal/axis_checks.h"

#include <optional>
#include <string>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/internal/dimension.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/array.h"

namespace meshsim::detail {


int canonicalize_axis(int axis, int rank, const char* param, const char* op, AxisNames axes,
                      std::span<const int64_t> shape) {
  if (const std::optional<int> dim = canonical_dimension(axis, rank)) return *dim;
  throw ShapeError(std::string(op) + " over " + axes.to_string() + ": " + param + "=" +
                   std::to_string(axis) + " is out of range [" + std::to_string(-rank) + ", " +
                   std::to_string(rank) + ") for x of shape " + shape_to_string(shape));
}

void require_equal_group_sizes(const DeviceContext& ctx, const GroupSet& set, const char* op) {
  if (set.equal_sizes) return;
  // The mesh layer words the complaint (which group differs from group 0).
  try {
    validate_axis_index_groups(ctx.mesh().abstract_mesh(), set.axes, set.index_groups,
                               /*require_equal_sizes=*/true);
  } catch (const GroupError& e) {
    throw GroupError(std::string(op) + ": " + e.message());
  }
}

}  // namespace meshsim::detail
