// Topology against hand-computed answers: node numbering (dimension 0
// fastest), link counts, routes on every kind (dimension order, shortest
// direction with a forward tie-break, forward-only rings, the switch's
// uplink + downlink), stable link ids, and validation errors.

#include "meshsim/mesh/topology/topology.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::topology_test {
namespace {

using Hops = std::vector<std::pair<int, int>>;  // (from, to) per link

TopologyDimension dim(DimensionKind kind, int size, double bandwidth = 1, double latency = 1) {
  return {kind, size, bandwidth, latency};
}

Hops hops(const Topology& topology, int source, int destination) {
  Hops out;
  for (const TopologyLink& link : topology.route(source, destination)) out.emplace_back(link.from, link.to);
  return out;
}

constexpr int S = TopologyLink::kSwitch;

TEST(Topology, NumbersNodesWithDimensionZeroFastest) {
  Topology t({dim(DimensionKind::ring, 4), dim(DimensionKind::switch_, 3)});
  EXPECT_EQ(t.num_nodes(), 12);
  EXPECT_EQ(t.coords(0), (std::vector<int>{0, 0}));
  EXPECT_EQ(t.coords(1), (std::vector<int>{1, 0}));
  EXPECT_EQ(t.coords(4), (std::vector<int>{0, 1}));
  EXPECT_EQ(t.coords(11), (std::vector<int>{3, 2}));
  std::vector<int> c{2, 1};
  EXPECT_EQ(t.node(c), 6);
  for (int n = 0; n < t.num_nodes(); ++n) EXPECT_EQ(t.node(t.coords(n)), n);
}

TEST(Topology, CountsLinksPerKind) {
  EXPECT_EQ(Topology({dim(DimensionKind::ring, 8)}).num_links(), 8);
  EXPECT_EQ(Topology({dim(DimensionKind::bidirectional_ring, 8)}).num_links(), 16);
  EXPECT_EQ(Topology({dim(DimensionKind::switch_, 8)}).num_links(), 16);
  EXPECT_EQ(Topology({dim(DimensionKind::fully_connected, 8)}).num_links(), 56);
  // A dimension of size 1 has no links; the other is replicated.
  EXPECT_EQ(Topology({dim(DimensionKind::ring, 1), dim(DimensionKind::ring, 4)}).num_links(), 4);
  // 4x4 torus: 16 nodes x 2 directions x 2 dimensions.
  EXPECT_EQ(Topology({dim(DimensionKind::bidirectional_ring, 4),
                      dim(DimensionKind::bidirectional_ring, 4)})
                .num_links(),
            64);
}

TEST(Topology, RoutesForwardOnlyOnAUnidirectionalRing) {
  Topology t({dim(DimensionKind::ring, 5)});
  EXPECT_EQ(hops(t, 0, 1), (Hops{{0, 1}}));
  EXPECT_EQ(hops(t, 1, 0), (Hops{{1, 2}, {2, 3}, {3, 4}, {4, 0}}));
  EXPECT_EQ(hops(t, 3, 1), (Hops{{3, 4}, {4, 0}, {0, 1}}));
  EXPECT_TRUE(t.route(2, 2).empty());
}

TEST(Topology, RoutesTheShorterWayOnABidirectionalRing) {
  Topology t({dim(DimensionKind::bidirectional_ring, 6)});
  EXPECT_EQ(hops(t, 0, 2), (Hops{{0, 1}, {1, 2}}));
  EXPECT_EQ(hops(t, 0, 5), (Hops{{0, 5}}));
  EXPECT_EQ(hops(t, 1, 4), (Hops{{1, 2}, {2, 3}, {3, 4}}));  // tie: forward
  EXPECT_EQ(hops(t, 4, 1), (Hops{{4, 5}, {5, 0}, {0, 1}}));  // tie: forward
  EXPECT_EQ(hops(t, 2, 0), (Hops{{2, 1}, {1, 0}}));
}

TEST(Topology, ForwardAndBackwardLinksAreDistinct) {
  Topology t({dim(DimensionKind::bidirectional_ring, 4)});
  EXPECT_NE(t.route(0, 1)[0].id, t.route(1, 0)[0].id);
  EXPECT_NE(t.route(0, 1)[0].id, t.route(0, 3)[0].id);
}

TEST(Topology, RoutesThroughTheSwitchAsUplinkThenDownlink) {
  Topology t({dim(DimensionKind::switch_, 4, 8, 0.5)});
  EXPECT_EQ(hops(t, 0, 2), (Hops{{0, S}, {S, 2}}));
  // Two flows into node 2 share its downlink, and nothing else.
  auto a = t.route(0, 2);
  auto b = t.route(1, 2);
  EXPECT_NE(a[0].id, b[0].id);
  EXPECT_EQ(a[1].id, b[1].id);
  // Two flows out of node 0 share its uplink.
  EXPECT_EQ(t.route(0, 1)[0].id, t.route(0, 3)[0].id);
  for (const TopologyLink& link : a) {
    EXPECT_EQ(link.bandwidth, 8);
    EXPECT_EQ(link.latency, 0.5);
    EXPECT_EQ(link.dimension, 0);
  }
}

TEST(Topology, RoutesFullyConnectedOnOneDirectLink) {
  Topology t({dim(DimensionKind::fully_connected, 4)});
  std::set<LinkId> ids;
  for (int s = 0; s < 4; ++s) {
    for (int d = 0; d < 4; ++d) {
      if (s == d) continue;
      EXPECT_EQ(hops(t, s, d), (Hops{{s, d}}));
      ids.insert(t.route(s, d)[0].id);
    }
  }
  EXPECT_EQ(ids.size(), 12u);  // one link per ordered pair
}

TEST(Topology, RoutesInDimensionOrderOnATorus) {
  // 4x4 torus: node = x + 4y. 0=(0,0) -> 10=(2,2): x first (tie: forward),
  // then y (tie: forward).
  Topology t(
      {dim(DimensionKind::bidirectional_ring, 4), dim(DimensionKind::bidirectional_ring, 4)});
  EXPECT_EQ(hops(t, 0, 10), (Hops{{0, 1}, {1, 2}, {2, 6}, {6, 10}}));
  // 1=(1,0) -> 12=(0,3): x backward one, y backward one across the wrap.
  EXPECT_EQ(hops(t, 1, 12), (Hops{{1, 0}, {0, 12}}));
  auto route = t.route(1, 12);
  EXPECT_EQ(route[0].dimension, 0);
  EXPECT_EQ(route[1].dimension, 1);
  // 5=(1,1) -> 12=(0,3): x backward one, y a tie (distance 2): forward.
  EXPECT_EQ(hops(t, 5, 12), (Hops{{5, 4}, {4, 8}, {8, 12}}));
}

TEST(Topology, Routes3DTorusWithWrapAround) {
  Topology t({dim(DimensionKind::bidirectional_ring, 4), dim(DimensionKind::bidirectional_ring, 4),
              dim(DimensionKind::bidirectional_ring, 4)});
  // (3,0,0)=3 -> (0,3,3)=60: one hop per dimension, each across the wrap.
  EXPECT_EQ(hops(t, 3, 60), (Hops{{3, 0}, {0, 12}, {12, 60}}));
}

TEST(Topology, RoutesAcrossHierarchyLevelsWithEachLevelsParameters) {
  // 2 nodes per ring, 3 ring groups on a switch: node = r + 2s.
  Topology t({dim(DimensionKind::ring, 2, 100, 1), dim(DimensionKind::switch_, 3, 10, 2)});
  auto route = t.route(1, 4);  // (1,0) -> (0,2)
  EXPECT_EQ(hops(t, 1, 4), (Hops{{1, 0}, {0, S}, {S, 4}}));
  EXPECT_EQ(route[0].bandwidth, 100);
  EXPECT_EQ(route[0].latency, 1);
  EXPECT_EQ(route[1].bandwidth, 10);
  EXPECT_EQ(route[2].latency, 2);
}

TEST(Topology, LinkIdsAreDenseAndLinkLooksThemUp) {
  Topology t({dim(DimensionKind::fully_connected, 3), dim(DimensionKind::ring, 1),
              dim(DimensionKind::switch_, 2), dim(DimensionKind::bidirectional_ring, 3)});
  std::set<LinkId> seen;
  for (int s = 0; s < t.num_nodes(); ++s) {
    for (int d = 0; d < t.num_nodes(); ++d) {
      for (const TopologyLink& link : t.route(s, d)) {
        EXPECT_EQ(t.link(link.id), link);
        seen.insert(link.id);
      }
    }
  }
  // Every link is used by some route: the ids are dense. (The backward link
  // of a ring of 3 is used: 1 -> 0 goes backward.)
  EXPECT_EQ(static_cast<LinkId>(seen.size()), t.num_links());
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), t.num_links() - 1);
}

TEST(Topology, RouteIntoABufferReplacesItsContents) {
  Topology t({dim(DimensionKind::ring, 4)});
  std::vector<TopologyLink> buffer = t.route(0, 3);
  t.route(0, 1, buffer);
  EXPECT_EQ(buffer, t.route(0, 1));
}

TEST(Topology, RejectsInvalidDimensions) {
  EXPECT_ERROR(Topology({}), TopologyError, "at least one dimension");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 0)}), TopologyError,
               "topology dimension 0 (ring): size must be >= 1, got 0");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 2), dim(static_cast<DimensionKind>(17), 2)}),
               TopologyError, "topology dimension 1: kind must be a DimensionKind, got 17");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 2), dim(DimensionKind::switch_, 2, 0)}),
               TopologyError,
               "topology dimension 1 (switch): bandwidth must be a finite number > 0");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 2, -5)}), TopologyError, "got -5");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 2, std::nan(""))}), TopologyError, "bandwidth");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 2, std::numeric_limits<double>::infinity())}),
               TopologyError, "bandwidth");
  EXPECT_ERROR(Topology({dim(DimensionKind::fully_connected, 2, 1, -1e-9)}), TopologyError,
               "topology dimension 0 (fully_connected): latency must be a finite number >= 0 "
               "seconds, got -1e-09");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 2, 1, std::nan(""))}), TopologyError, "latency");
  EXPECT_ERROR(Topology({dim(DimensionKind::ring, 65536), dim(DimensionKind::ring, 65536)}),
               TopologyError, "too large");
}

TEST(Topology, RejectsNodesAndLinksOutOfRange) {
  Topology t({dim(DimensionKind::ring, 4)});
  EXPECT_ERROR(t.route(0, 4), InvalidArgumentError,
               "route destination node 4 is out of range [0, 4)");
  EXPECT_ERROR(t.route(-1, 0), InvalidArgumentError, "route source node -1");
  EXPECT_ERROR(t.coords(4), InvalidArgumentError, "node 4");
  std::vector<int> bad{4};
  EXPECT_ERROR(t.node(bad), InvalidArgumentError, "coordinate 4 is out of range [0, 4)");
  EXPECT_ERROR(t.link(4), InvalidArgumentError, "link id 4 is out of range [0, 4)");
}

TEST(Topology, PrintsTheCanonicalSpec) {
  Topology t(
      {{DimensionKind::ring, 8, 50e9, 500e-9}, {DimensionKind::switch_, 4, 1073741824, 2e-6}});
  EXPECT_EQ(t.to_string(), "ring:8:bw=50GB/s,lat=500ns;switch:4:bw=1GiB/s,lat=2us");
}

}  // namespace
}  // namespace meshsim::topology_test
