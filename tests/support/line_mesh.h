#pragma once
// line_mesh("x", {5, 3, 4}): a one-axis mesh over the given device ids, in
// that position order.

#include <utility>
#include <vector>

#include "meshsim/mesh/mesh.h"

namespace meshsim {

inline Mesh line_mesh(const char* axis, std::vector<int> devices) {
  const int n = static_cast<int>(devices.size());
  return Mesh(AbstractMesh({{axis, n}}), std::move(devices));
}

}  // namespace meshsim
