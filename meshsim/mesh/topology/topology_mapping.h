#pragma once
// TopologyMapping: where each mesh position sits on a topology. Every mesh
// axis spans one or more topology dimensions (fastest first); a position's
// coordinate on an axis is spread over those dimensions in mixed radix
// (coordinate % size of the first, then / size, ...). So a (x=4, y=4, z=4)
// mesh sits on a 4x4x4 torus one axis per dimension, and a one-axis mesh of
// 16 on a 4x4 torus spans both dimensions.
//
// The default mapping places the LAST (fastest) mesh axis on the lowest
// dimensions: mesh positions are row-major (last axis fastest) and topology
// nodes have dimension 0 fastest, so when the axis and dimension sizes line
// up the default mapping is the identity, position p = node p, and the
// fastest-varying mesh axis (e.g. tensor parallelism) gets the innermost
// dimension (e.g. the links inside a server).
//
// A Mesh's device ids are runtime ids; translate with
// mesh.position_of(device) first.

#include <string>
#include <utility>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/topology/topology.h"

namespace meshsim {

class TopologyMapping {
 public:
  // The default mapping: from the last mesh axis to the first, each takes the
  // next dimensions (from 0 up) until their product reaches its size; an axis
  // of size 1 takes none, and dimensions of size 1 left at the end are
  // unused. Throws TopologyError naming the axis, its size, the dimensions
  // and their sizes when the product overshoots or the dimensions run out,
  // and the mesh and the topology when the topology has nodes left over.
  TopologyMapping(const AbstractMesh& mesh, const Topology& topology);

  // An explicit mapping: each mesh axis (by name, every axis once) and the
  // dimensions it spans, fastest first. Throws UnknownAxisError for a name the
  // mesh does not have; TopologyError for an axis missing or given twice, a
  // dimension out of range or used twice, an unused dimension of size > 1,
  // or an axis whose size differs from the product of its dimensions' sizes
  // (naming the axis, the dimensions and both sizes).
  TopologyMapping(const AbstractMesh& mesh, const Topology& topology,
                  const std::vector<std::pair<std::string, std::vector<int>>>& axis_dimensions);

  // The topology node of mesh position `position`. InvalidArgumentError
  // unless 0 <= position < mesh size.
  int node(int position) const;
  // The dimensions mesh axis `axis` (its index in the mesh) spans, fastest
  // first. InvalidArgumentError unless 0 <= axis < the mesh's axis count.
  const std::vector<int>& dimensions_of_axis(int axis) const;

 private:
  void check_and_tabulate(const AbstractMesh& mesh, const Topology& topology);

  std::vector<std::vector<int>> axis_dimensions_;  // per mesh axis
  std::vector<int> node_of_position_;
};

}  // namespace meshsim
