#include "meshsim/mesh/topology/topology.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/topology/internal/units.h"

namespace meshsim {
namespace {

std::string describe(int d, const TopologyDimension& dim) {
  return "topology dimension " + std::to_string(d) + " (" + std::string(kind_name(dim.kind)) + ")";
}

std::string number(double value) {
  // to_string would print 1e-9 as 0.000000.
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

}  // namespace

std::string_view kind_name(DimensionKind kind) {
  switch (kind) {
    case DimensionKind::fully_connected:
      return "fully_connected";
    case DimensionKind::switch_:
      return "switch";
    case DimensionKind::ring:
      return "ring";
    case DimensionKind::bidirectional_ring:
      return "bidirectional_ring";
  }
  return "unknown";
}

Topology::Topology(std::vector<TopologyDimension> dimensions) : dimensions_(std::move(dimensions)) {
  if (dimensions_.empty()) throw TopologyError("a topology needs at least one dimension; got none");
  int64_t nodes = 1;
  for (int d = 0; d < num_dimensions(); ++d) {
    const TopologyDimension& dim = dimensions_[d];
    // A kind cast from an integer out of range would route as something and
    // print as "unknown", which no spec parses back.
    if (kind_name(dim.kind) == "unknown") {
      throw TopologyError("topology dimension " + std::to_string(d) +
                          ": kind must be a DimensionKind, got " +
                          std::to_string(static_cast<int>(dim.kind)));
    }
    if (dim.size < 1) {
      throw TopologyError(describe(d, dim) + ": size must be >= 1, got " +
                          std::to_string(dim.size));
    }
    if (!std::isfinite(dim.bandwidth) || dim.bandwidth <= 0) {
      throw TopologyError(describe(d, dim) +
                          ": bandwidth must be a finite number > 0 bytes/s, got " +
                          number(dim.bandwidth));
    }
    if (!std::isfinite(dim.latency) || dim.latency < 0) {
      throw TopologyError(describe(d, dim) +
                          ": latency must be a finite number >= 0 seconds, got " +
                          number(dim.latency));
    }
    strides_.push_back(static_cast<int>(nodes));
    nodes *= dim.size;
    if (nodes > INT_MAX) {
      throw TopologyError("topology is too large: more than INT_MAX nodes at " + describe(d, dim));
    }
  }
  num_nodes_ = static_cast<int>(nodes);
  for (int d = 0; d < num_dimensions(); ++d) {
    link_offsets_.push_back(num_links_);
    num_links_ += static_cast<LinkId>(num_nodes_) * ports(d);
  }
}

int Topology::ports(int d) const {
  const TopologyDimension& dim = dimensions_[d];
  if (dim.size == 1) return 0;
  switch (dim.kind) {
    case DimensionKind::fully_connected:
      return dim.size - 1;  // one per peer
    case DimensionKind::switch_:
      return 2;  // uplink, downlink
    case DimensionKind::ring:
      return 1;  // forward
    case DimensionKind::bidirectional_ring:
      return 2;  // forward, backward
  }
  return 0;
}

void Topology::check_node(int node, std::string_view what) const {
  if (node < 0 || node >= num_nodes_) {
    throw InvalidArgumentError(std::string(what) + " node " + std::to_string(node) +
                               " is out of range [0, " + std::to_string(num_nodes_) +
                               ") of topology " + to_string());
  }
}

std::vector<int> Topology::coords(int node) const {
  check_node(node, "topology");
  std::vector<int> out(dimensions_.size());
  for (size_t d = 0; d < dimensions_.size(); ++d) {
    out[d] = node % dimensions_[d].size;
    node /= dimensions_[d].size;
  }
  return out;
}

int Topology::node(std::span<const int> coords) const {
  if (coords.size() != dimensions_.size()) {
    throw InvalidArgumentError("topology coordinates: expected " +
                               std::to_string(dimensions_.size()) + ", got " +
                               std::to_string(coords.size()));
  }
  int out = 0;
  for (int d = 0; d < num_dimensions(); ++d) {
    if (coords[d] < 0 || coords[d] >= dimensions_[d].size) {
      throw InvalidArgumentError("topology coordinate " + std::to_string(coords[d]) +
                                 " is out of range [0, " + std::to_string(dimensions_[d].size) +
                                 ") of " + describe(d, dimensions_[d]));
    }
    out += coords[d] * strides_[d];
  }
  return out;
}

LinkId Topology::link_id(int d, int node, int port) const {
  return link_offsets_[d] + static_cast<LinkId>(node) * ports(d) + port;
}

// Port numbering per kind: fully_connected, port p leads to the p-th other
// coordinate (skipping the node's own); switch, 0 = uplink, 1 = downlink;
// ring, 0 = forward; bidirectional_ring, 0 = forward, 1 = backward.
TopologyLink Topology::make_link(int d, int node, int port) const {
  const TopologyDimension& dim = dimensions_[d];
  const int stride = strides_[d];
  const int c = node / stride % dim.size;
  const int base = node - c * stride;
  TopologyLink link{link_id(d, node, port), d, node, node, dim.bandwidth, dim.latency};
  switch (dim.kind) {
    case DimensionKind::fully_connected:
      link.to = base + (port < c ? port : port + 1) * stride;
      break;
    case DimensionKind::switch_:
      (port == 0 ? link.to : link.from) = TopologyLink::kSwitch;
      break;
    case DimensionKind::ring:
      link.to = base + (c + 1) % dim.size * stride;
      break;
    case DimensionKind::bidirectional_ring:
      link.to = base + (port == 0 ? (c + 1) % dim.size : (c + dim.size - 1) % dim.size) * stride;
      break;
  }
  return link;
}

std::vector<TopologyLink> Topology::route(int source, int destination) const {
  std::vector<TopologyLink> out;
  route(source, destination, out);
  return out;
}

void Topology::route(int source, int destination, std::vector<TopologyLink>& out) const {
  check_node(source, "route source");
  check_node(destination, "route destination");
  out.clear();
  int at = source;
  for (int d = 0; d < num_dimensions(); ++d) {
    const TopologyDimension& dim = dimensions_[d];
    const int stride = strides_[d];
    const int from = at / stride % dim.size;
    const int to = destination / stride % dim.size;
    if (from == to) continue;
    const int target = at + (to - from) * stride;
    switch (dim.kind) {
      case DimensionKind::fully_connected:
        out.push_back(make_link(d, at, to < from ? to : to - 1));
        break;
      case DimensionKind::switch_:
        out.push_back(make_link(d, at, 0));
        out.push_back(make_link(d, target, 1));
        break;
      case DimensionKind::ring:
      case DimensionKind::bidirectional_ring: {
        const int forward = (to - from + dim.size) % dim.size;
        const bool backward =
            dim.kind == DimensionKind::bidirectional_ring && dim.size - forward < forward;
        const int hops = backward ? dim.size - forward : forward;
        int node = at;
        for (int h = 0; h < hops; ++h) {
          TopologyLink link = make_link(d, node, backward ? 1 : 0);
          node = link.to;
          out.push_back(link);
        }
        break;
      }
    }
    at = target;
  }
}

TopologyLink Topology::link(LinkId id) const {
  if (id < 0 || id >= num_links_) {
    throw InvalidArgumentError("link id " + std::to_string(id) + " is out of range [0, " +
                               std::to_string(num_links_) + ") of topology " + to_string());
  }
  const int d = static_cast<int>(std::upper_bound(link_offsets_.begin(), link_offsets_.end(), id) -
                                 link_offsets_.begin()) -
                1;
  // Dimensions of size 1 have no links and share their offset with the next
  // dimension; upper_bound skips them.
  const LinkId local = id - link_offsets_[d];
  return make_link(d, static_cast<int>(local / ports(d)), static_cast<int>(local % ports(d)));
}

std::string Topology::to_string() const {
  std::string out;
  for (const TopologyDimension& dim : dimensions_) {
    if (!out.empty()) out += ';';
    out += std::string(kind_name(dim.kind)) + ":" + std::to_string(dim.size) +
           ":bw=" + topology_units::format_bandwidth(dim.bandwidth) +
           ",lat=" + topology_units::format_latency(dim.latency);
  }
  return out;
}

}  // namespace meshsim
