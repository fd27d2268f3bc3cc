#pragma once
// What the one-line spec and the JSON reader have in common: a list of
// dimension groups (one kind, its sizes, bandwidth, latency; torus2d / torus3d
// standing for 2 / 3 bidirectional rings) turned into a Topology, with an
// omitted size derived from the device count. One implementation, so both
// forms accept the same kinds and derive sizes by the same rule.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshsim/mesh/topology/topology.h"

namespace meshsim {

struct DimensionGroup {
  std::string label;  // "dimension group 1 (torus2d)", for error messages
  DimensionKind kind;
  int dimensions;          // 1, or 2 / 3 for torus2d / torus3d
  std::vector<int> sizes;  // `dimensions` sizes, or empty: derive from the device count
  double bandwidth;        // bytes per second
  double latency;          // seconds
};

struct GroupKind {
  DimensionKind kind;
  int dimensions;
};
// The kind a group names: fully_connected, switch, ring, bidirectional_ring,
// torus2d, torus3d. TopologyError naming `field` and the name otherwise.
GroupKind parse_group_kind(std::string_view name, std::string_view field);

// The topology the groups describe, in order. At most one group may omit its
// size, and only a one-dimension group: it is device_count divided by the
// product of the other sizes. TopologyError naming the group if a size is
// omitted without a device count, in a torus group or in two groups, if the
// division is not exact, or if the node count differs from a given
// device_count; and as Topology's constructor for an invalid dimension.
Topology build_topology(const std::vector<DimensionGroup>& groups, std::optional<int> device_count);

}  // namespace meshsim
