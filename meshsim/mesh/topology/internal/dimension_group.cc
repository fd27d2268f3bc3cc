#include "meshsim/mesh/topology/internal/dimension_group.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>

#include "meshsim/mesh/error.h"

namespace meshsim {
namespace {

struct NamedKind {
  std::string_view name;
  GroupKind kind;
};

constexpr std::array<NamedKind, 6> kKinds{{
    {"fully_connected", {DimensionKind::fully_connected, 1}},
    {"switch", {DimensionKind::switch_, 1}},
    {"ring", {DimensionKind::ring, 1}},
    {"bidirectional_ring", {DimensionKind::bidirectional_ring, 1}},
    {"torus2d", {DimensionKind::bidirectional_ring, 2}},
    {"torus3d", {DimensionKind::bidirectional_ring, 3}},
}};

constexpr int64_t kCap = int64_t{INT_MAX} + 1;

}  // namespace

GroupKind parse_group_kind(std::string_view name, std::string_view field) {
  for (const NamedKind& k : kKinds) {
    if (k.name == name) return k.kind;
  }
  std::string known;
  for (const NamedKind& k : kKinds) known += (known.empty() ? "" : ", ") + std::string(k.name);
  throw TopologyError(std::string(field) + ": unknown kind '" + std::string(name) +
                      "' (expected one of " + known + ")");
}

Topology build_topology(const std::vector<DimensionGroup>& groups,
                        std::optional<int> device_count) {
  const DimensionGroup* derived = nullptr;
  int64_t given = 1;
  for (const DimensionGroup& group : groups) {
    if (!group.sizes.empty()) {
      // Sizes < 1 are Topology's to report; the cap only keeps the product
      // from overflowing (Topology reports a topology too large).
      for (int size : group.sizes) given = std::min<int64_t>(given * std::max(size, 1), kCap);
      continue;
    }
    if (group.dimensions != 1) {
      throw TopologyError(group.label + ": sizes omitted; a torus needs them (e.g. torus" +
                          std::to_string(group.dimensions) + "d:4x4" +
                          (group.dimensions == 3 ? "x4" : "") + ":...)");
    }
    if (derived) {
      throw TopologyError(group.label + ": size omitted, but " + derived->label +
                          " omits its size too; at most one size can be derived");
    }
    if (!device_count) {
      throw TopologyError(group.label +
                          ": size omitted, and there is no device count to derive it from");
    }
    derived = &group;
  }
  int derived_size = 0;
  if (derived) {
    if (given > *device_count || *device_count % given != 0) {
      throw TopologyError(derived->label + ": size omitted, but the other dimensions' " +
                          std::to_string(given) + " nodes do not divide the " +
                          std::to_string(*device_count) + " devices");
    }
    derived_size = static_cast<int>(*device_count / given);
  }

  std::vector<TopologyDimension> dimensions;
  for (const DimensionGroup& group : groups) {
    for (int i = 0; i < group.dimensions; ++i) {
      int size = group.sizes.empty() ? derived_size : group.sizes[i];
      dimensions.push_back({group.kind, size, group.bandwidth, group.latency});
    }
  }
  Topology topology(std::move(dimensions));
  if (device_count && topology.num_nodes() != *device_count) {
    throw TopologyError("the topology has " + std::to_string(topology.num_nodes()) +
                        " nodes but there are " + std::to_string(*device_count) + " devices");
  }
  return topology;
}

}  // namespace meshsim
