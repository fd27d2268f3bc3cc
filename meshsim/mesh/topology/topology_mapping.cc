#include "meshsim/mesh/topology/topology_mapping.h"

#include <cstdint>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace {

std::string dimension_sizes(const Topology& topology, const std::vector<int>& dims) {
  std::vector<int> sizes;
  for (int d : dims) sizes.push_back(topology.dimensions()[d].size);
  return "dimension" + std::string(dims.size() == 1 ? " " : "s ") +
         format_ints<int>(dims, dims.size() == 1 ? "" : "[", dims.size() == 1 ? "" : "]") +
         " of size" + (dims.size() == 1 ? " " : "s ") +
         format_ints<int>(sizes, dims.size() == 1 ? "" : "[", dims.size() == 1 ? "" : "]");
}

std::string axis_label(const AbstractMesh& mesh, int axis) {
  return "mesh axis " + quote_axis(mesh.axis_names()[axis]) + " (size " +
         std::to_string(mesh.axis_sizes()[axis]) + ")";
}

}  // namespace

TopologyMapping::TopologyMapping(const AbstractMesh& mesh, const Topology& topology)
    : axis_dimensions_(mesh.num_axes()) {
  int next = 0;
  for (int axis = mesh.num_axes(); axis-- > 0;) {
    int64_t product = 1;
    while (product < mesh.axis_sizes()[axis] && next < topology.num_dimensions()) {
      product *= topology.dimensions()[next].size;
      axis_dimensions_[axis].push_back(next++);
    }
    if (product != mesh.axis_sizes()[axis]) {
      throw TopologyError(axis_label(mesh, axis) + " does not fit " +
                          (axis_dimensions_[axis].empty()
                               ? "the topology: no dimensions are left"
                               : "topology " + dimension_sizes(topology, axis_dimensions_[axis]) +
                                     " (product " + std::to_string(product) + ")") +
                          "; mesh " + mesh.to_string() + ", topology " + topology.to_string());
    }
  }
  check_and_tabulate(mesh, topology);
}

TopologyMapping::TopologyMapping(
    const AbstractMesh& mesh, const Topology& topology,
    const std::vector<std::pair<std::string, std::vector<int>>>& axis_dimensions)
    : axis_dimensions_(mesh.num_axes()) {
  std::vector<bool> axis_given(mesh.num_axes(), false);
  for (const auto& [name, dims] : axis_dimensions) {
    int axis = mesh.axis_position(name);
    if (axis_given[axis]) throw TopologyError(axis_label(mesh, axis) + " is mapped twice");
    axis_given[axis] = true;
    for (int d : dims) {
      if (d < 0 || d >= topology.num_dimensions()) {
        throw TopologyError(axis_label(mesh, axis) + " is mapped to dimension " +
                            std::to_string(d) + ", out of range [0, " +
                            std::to_string(topology.num_dimensions()) + ") of topology " +
                            topology.to_string());
      }
    }
    axis_dimensions_[axis] = dims;
  }
  for (int axis = 0; axis < mesh.num_axes(); ++axis) {
    if (!axis_given[axis]) throw TopologyError(axis_label(mesh, axis) + " is not mapped");
    int64_t product = 1;
    for (int d : axis_dimensions_[axis]) product *= topology.dimensions()[d].size;
    if (product != mesh.axis_sizes()[axis]) {
      throw TopologyError(axis_label(mesh, axis) + " does not match topology " +
                          dimension_sizes(topology, axis_dimensions_[axis]) + " (product " +
                          std::to_string(product) + ")");
    }
  }
  check_and_tabulate(mesh, topology);
}

void TopologyMapping::check_and_tabulate(const AbstractMesh& mesh, const Topology& topology) {
  std::vector<int> owner(topology.num_dimensions(), -1);
  for (int axis = 0; axis < mesh.num_axes(); ++axis) {
    for (int d : axis_dimensions_[axis]) {
      if (owner[d] >= 0) {
        throw TopologyError("topology dimension " + std::to_string(d) + " is mapped to both " +
                            axis_label(mesh, owner[d]) + " and " + axis_label(mesh, axis));
      }
      owner[d] = axis;
    }
  }
  for (int d = 0; d < topology.num_dimensions(); ++d) {
    if (owner[d] < 0 && topology.dimensions()[d].size > 1) {
      throw TopologyError("topology dimension " + std::to_string(d) + " (size " +
                          std::to_string(topology.dimensions()[d].size) +
                          ") is not mapped to any axis of mesh " + mesh.to_string() +
                          "; the topology has " + std::to_string(topology.num_nodes()) +
                          " nodes, the mesh " + std::to_string(mesh.size()) + " positions");
    }
  }
  node_of_position_.resize(mesh.size());
  std::vector<int> node_coords(topology.num_dimensions(), 0);
  for (int position = 0; position < mesh.size(); ++position) {
    std::vector<int> axis_coords = mesh.coords(position);
    for (int axis = 0; axis < mesh.num_axes(); ++axis) {
      int c = axis_coords[axis];
      for (int d : axis_dimensions_[axis]) {
        node_coords[d] = c % topology.dimensions()[d].size;
        c /= topology.dimensions()[d].size;
      }
    }
    node_of_position_[position] = topology.node(node_coords);
  }
}

const std::vector<int>& TopologyMapping::dimensions_of_axis(int axis) const {
  if (axis < 0 || axis >= static_cast<int>(axis_dimensions_.size())) {
    throw InvalidArgumentError("mesh axis index " + std::to_string(axis) + " is out of range [0, " +
                               std::to_string(axis_dimensions_.size()) + ")");
  }
  return axis_dimensions_[axis];
}

int TopologyMapping::node(int position) const {
  if (position < 0 || position >= static_cast<int>(node_of_position_.size())) {
    throw InvalidArgumentError("mesh position " + std::to_string(position) +
                               " is out of range [0, " + std::to_string(node_of_position_.size()) +
                               ")");
  }
  return node_of_position_[position];
}

}  // namespace meshsim
