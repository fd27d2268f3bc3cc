#pragma once
// Topology: a network of devices as plain data, in the shape of ASTRA-sim's
// multi-dimensional network description: an ordered list of dimensions, each
// a basic topology {kind, size, bandwidth, latency} replicated across the
// coordinates of the other dimensions.
//
// Nodes are numbered 0..num_nodes()-1 with dimension 0 varying FASTEST
// (node = c0 + s0·(c1 + s1·(c2 + ...))), as ASTRA-sim numbers NPUs: dimension
// 0 is the innermost level (e.g. the links inside a server), the last one the
// outermost (e.g. the scale-out switch).
//
// A torus is not a kind of its own: a 2-D (3-D) torus with wrap-around is two
// (three) bidirectional-ring dimensions. The one-line spec and the JSON reader
// accept torus2d / torus3d as a shorthand that expands to those dimensions.
//
// Routing is dimension-order: a message first corrects its coordinate in
// dimension 0, then in dimension 1, and so on. Within one dimension:
//   fully_connected     one direct link from the source to the destination;
//   switch              the source's uplink to the switch, then the
//                       destination's downlink (2 links, each with the
//                       dimension's bandwidth and latency, as ASTRA-sim's
//                       switch: 2 hops), so flows into one destination share
//                       its downlink and flows out of one source its uplink;
//   ring                (unidirectional) forward only, c -> c+1 mod size;
//   bidirectional_ring  the shorter direction; on a tie (even size, distance
//                       size/2) forward.
//
// Units: bandwidth in bytes per second, latency in seconds (doubles).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace meshsim {

enum class DimensionKind { fully_connected, switch_, ring, bidirectional_ring };

// "fully_connected", "switch", "ring", "bidirectional_ring": the names the
// spec and the JSON reader use.
std::string_view kind_name(DimensionKind kind);

struct TopologyDimension {
  DimensionKind kind;
  int size;          // nodes along this dimension
  double bandwidth;  // bytes per second, of every link of the dimension
  double latency;    // seconds, of every link of the dimension

  bool operator==(const TopologyDimension&) const = default;
};

// A stable link id: dense in [0, Topology::num_links()). A model keeps per-link
// state indexed by it.
using LinkId = std::int64_t;

// One directed link. `from` / `to` are node ids; a switch's uplink has
// to == kSwitch and its downlink from == kSwitch.
struct TopologyLink {
  static constexpr int kSwitch = -1;

  LinkId id;
  int dimension;
  int from;
  int to;
  double bandwidth;  // bytes per second
  double latency;    // seconds

  bool operator==(const TopologyLink&) const = default;
};

class Topology {
 public:
  // Throws TopologyError naming the dimension, the field and the value if
  // there are no dimensions, a size is < 1, a bandwidth is not a finite
  // number > 0, a latency is not a finite number >= 0, or the node count
  // does not fit in an int.
  explicit Topology(std::vector<TopologyDimension> dimensions);
  // Copied, also where moved from: a moved-from topology would keep its node
  // and link counts with no dimensions (free routes, reads out of bounds).
  Topology(const Topology&) = default;
  Topology& operator=(const Topology&) = default;

  const std::vector<TopologyDimension>& dimensions() const { return dimensions_; }
  int num_dimensions() const { return static_cast<int>(dimensions_.size()); }
  // The product of the dimension sizes.
  int num_nodes() const { return num_nodes_; }
  LinkId num_links() const { return num_links_; }

  // A node's coordinate in every dimension (dimension 0 first).
  // InvalidArgumentError unless 0 <= node < num_nodes().
  std::vector<int> coords(int node) const;
  // Inverse of coords(). InvalidArgumentError on a wrong count or a
  // coordinate out of its dimension's range.
  int node(std::span<const int> coords) const;

  // The links a message from `source` to `destination` crosses, in order
  // (empty when source == destination). InvalidArgumentError on a node out
  // of range.
  std::vector<TopologyLink> route(int source, int destination) const;
  // The same, written into `out` (cleared first), so a caller on a hot path
  // reuses one buffer.
  void route(int source, int destination, std::vector<TopologyLink>& out) const;

  // The link with this id. InvalidArgumentError unless 0 <= id < num_links().
  TopologyLink link(LinkId id) const;

  // The canonical one-line spec, one group per dimension, e.g.
  // "ring:8:bw=50GB/s,lat=500ns;switch:4:bw=25GB/s,lat=1us";
  // parse_topology_spec(to_string()) == *this.
  std::string to_string() const;

  bool operator==(const Topology& other) const { return dimensions_ == other.dimensions_; }

 private:
  void check_node(int node, std::string_view what) const;
  // Outgoing links per node in dimension d (0 for a dimension of size 1).
  int ports(int d) const;
  LinkId link_id(int d, int node, int port) const;
  TopologyLink make_link(int d, int node, int port) const;

  std::vector<TopologyDimension> dimensions_;
  std::vector<int> strides_;          // node-id stride of each dimension
  std::vector<LinkId> link_offsets_;  // first link id of each dimension
  int num_nodes_ = 1;
  LinkId num_links_ = 0;
};

}  // namespace meshsim
