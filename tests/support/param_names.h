#pragma once
// Readable names for parametrized collective tests: "x4y2_over_y_x_grouped"
// for a (x=4, y=2) mesh, a collective over ("y", "x") with axis_index_groups.

#include <string>
#include <utility>
#include <vector>

#include "meshsim/mesh/axis_groups.h"

namespace meshsim::testing_names {

inline std::string mesh_axes_name(const std::vector<std::pair<std::string, int>>& mesh,
                                  const std::vector<std::string>& axes,
                                  const AxisIndexGroups& groups = {}) {
  std::string name;
  for (const auto& [axis, size] : mesh) name += axis + std::to_string(size);
  name += "_over";
  for (const auto& a : axes) name += "_" + a;
  if (!groups.empty()) name += "_grouped";
  return name;
}

}  // namespace meshsim::testing_names
