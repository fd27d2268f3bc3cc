// CongestionAwareModel against hand-computed schedules: store-and-forward on
// an idle network, shared links (twice as long), a switch's shared downlink,
// idle gaps used by later messages, independence from the order the set is
// given in, the canonical-order contract of arrival(), and reset(). Powers
// of two make every value exact.

#include "meshsim/runtime/time/congestion_aware_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/topology/topology_spec.h"
#include "support/expect_error.h"

namespace meshsim::congestion_aware_model_test {
namespace {

// Links of 1024 B/s and 0.25 s: 1024 bytes occupy a link for T = 1 s.
constexpr double kBandwidth = 1024;
constexpr double kLatency = 0.25;
constexpr int64_t kBytes = 1024;

Topology ring(DimensionKind kind, int size) {
  return Topology({{kind, size, kBandwidth, kLatency}});
}

TEST(NetworkCongestionAware, StoresAndForwardsOnAnIdleNetwork) {
  CongestionAwareModel model(ring(DimensionKind::ring, 8));
  EXPECT_EQ(model.arrival({0, 3, kBytes, 2.0}), 2.0 + 3 * (1.0 + kLatency));
  // Per link its own bandwidth: ring hop (1024 B/s, 0.5 s) then switch up +
  // down (256 B/s, 0.125 s): 1 + 0.5 + 2 x (4 + 0.125).
  CongestionAwareModel hierarchy(
      parse_topology_spec("ring:2:bw=1KiB/s,lat=500ms;switch:2:bw=256B/s,lat=125ms"));
  EXPECT_EQ(hierarchy.arrival({1, 2, kBytes, 0.0}), 1.0 + 0.5 + 2 * (4.0 + 0.125));
}

TEST(NetworkCongestionAware, TwoFlowsOnOneLinkTakeTwiceAsLong) {
  CongestionAwareModel model(ring(DimensionKind::ring, 4));
  std::vector<Transfer> flows{{0, 1, kBytes, 0.0, 0}, {0, 1, kBytes, 0.0, 1}};
  EXPECT_EQ(model.arrivals(flows), (std::vector<double>{1.0 + kLatency, 2.0 + kLatency}));
  // Alone, the same message takes 1 + latency.
  model.reset();
  EXPECT_EQ(model.arrival(flows[1]), 1.0 + kLatency);
}

TEST(NetworkCongestionAware, FlowsOnDisjointLinksDoNotInteract) {
  CongestionAwareModel model(ring(DimensionKind::ring, 4));
  std::vector<Transfer> flows{{0, 1, kBytes, 0.0}, {2, 3, kBytes, 0.0}, {1, 2, kBytes, 0.0}};
  EXPECT_EQ(model.arrivals(flows), (std::vector<double>(3, 1.0 + kLatency)));
}

TEST(NetworkCongestionAware, FlowsIntoOneSwitchPortShareItsDownlink) {
  CongestionAwareModel model(Topology({{DimensionKind::switch_, 4, kBandwidth, kLatency}}));
  // Separate uplinks [0, 1); 0 -> 2 holds the downlink [1.25, 2.25), so
  // 1 -> 2 takes it at 2.25.
  std::vector<Transfer> flows{{0, 2, kBytes, 0.0}, {1, 2, kBytes, 0.0}};
  EXPECT_EQ(model.arrivals(flows), (std::vector<double>{2.5, 3.5}));
  // Into different ports: no contention.
  model.reset();
  std::vector<Transfer> apart{{0, 2, kBytes, 0.0}, {1, 3, kBytes, 0.0}};
  EXPECT_EQ(model.arrivals(apart), (std::vector<double>{2.5, 2.5}));
}

TEST(NetworkCongestionAware, ALaterMessageUsesIdleTimeBeforeAnEarlierOnesBooking) {
  // 0 -> 2 holds link 0->1 [0, 1) and link 1->2 [1.25, 2.25). 1 -> 2 (after
  // it in canonical order) is at link 1->2 at 0 and fits in [0, 1.25).
  CongestionAwareModel model(ring(DimensionKind::ring, 4));
  std::vector<Transfer> fits{{0, 2, kBytes, 0.0}, {1, 2, kBytes, 0.0}};
  EXPECT_EQ(model.arrivals(fits), (std::vector<double>{2.5, 1.25}));
  // Twice as large it does not fit: it waits for the end of the booking.
  model.reset();
  std::vector<Transfer> too_large{{0, 2, kBytes, 0.0}, {1, 2, 2 * kBytes, 0.0}};
  EXPECT_EQ(model.arrivals(too_large), (std::vector<double>{2.5, 2.25 + 2.0 + kLatency}));
}

TEST(NetworkCongestionAware, ArrivalsAreAFunctionOfTheSetNotItsOrder) {
  Topology torus = parse_topology_spec("torus2d:4x4:bw=1KiB/s,lat=250ms");
  std::mt19937 rng(13);
  std::vector<Transfer> transfers;
  for (int i = 0; i < 200; ++i) {
    transfers.push_back({static_cast<int>(rng() % 16), static_cast<int>(rng() % 16),
                         static_cast<int64_t>(rng() % 4096), static_cast<double>(rng() % 8) / 4,
                         i});
  }
  CongestionAwareModel model(torus);
  std::vector<double> first = model.arrivals(transfers);

  std::vector<size_t> permutation(transfers.size());
  for (size_t i = 0; i < permutation.size(); ++i) permutation[i] = i;
  std::shuffle(permutation.begin(), permutation.end(), rng);
  std::vector<Transfer> shuffled;
  for (size_t i : permutation) shuffled.push_back(transfers[i]);
  model.reset();
  std::vector<double> second = model.arrivals(shuffled);
  for (size_t k = 0; k < permutation.size(); ++k) EXPECT_EQ(second[k], first[permutation[k]]);

  // One by one in canonical order: the same answers.
  std::vector<size_t> canonical(transfers.size());
  for (size_t i = 0; i < canonical.size(); ++i) canonical[i] = i;
  std::sort(canonical.begin(), canonical.end(),
            [&](size_t a, size_t b) { return canonically_before(transfers[a], transfers[b]); });
  model.reset();
  for (size_t i : canonical) EXPECT_EQ(model.arrival(transfers[i]), first[i]);

  // And the congestion is real: some message arrives later than alone.
  int delayed = 0;
  for (size_t i = 0; i < transfers.size(); ++i) {
    model.reset();
    delayed += model.arrival(transfers[i]) < first[i];
  }
  EXPECT_GT(delayed, 0);
}

TEST(NetworkCongestionAware, RejectsAnArrivalThatDepartsBeforeOnePricedEarlier) {
  CongestionAwareModel model(ring(DimensionKind::ring, 4));
  EXPECT_EQ(model.arrival({1, 2, kBytes, 1.0}), 2.0 + kLatency);
  EXPECT_ERROR(model.arrival({3, 0, kBytes, 0.5}), InvalidArgumentError,
               "congestion-aware model: transfer 3 -> 0 (1024 bytes, departing at 0.5 s, "
               "sequence 0) departs before transfer 1 -> 2 (1024 bytes, departing at 1 s, "
               "sequence 0), priced earlier");
  // At the same departure any order is accepted, booked in the order of the
  // calls (a causal replay needs it): 1 -> 3 waits for 1 -> 2's booking.
  EXPECT_EQ(model.arrival({0, 1, kBytes, 1.0}), 2.0 + kLatency);
  EXPECT_EQ(model.arrival({1, 3, kBytes, 1.0}), 4.0 + 2 * kLatency);
  // After reset() the network is idle and any transfer may come first.
  model.reset();
  EXPECT_EQ(model.arrival({0, 1, kBytes, 0.0}), 1.0 + kLatency);
}

TEST(NetworkCongestionAware, ARejectedTransferBooksNothing) {
  CongestionAwareModel model(ring(DimensionKind::ring, 4));
  EXPECT_ERROR(model.arrival({0, 9, kBytes, 0.0}), InvalidArgumentError,
               "destination node 9 is out of range [0, 4)");
  // A set with one bad transfer is rejected before any of it is booked.
  std::vector<Transfer> set{{0, 1, kBytes, 0.0}, {0, 1, kBytes, 0.0, 1}, {4, 1, kBytes, 0.0}};
  EXPECT_ERROR(model.arrivals(set), InvalidArgumentError, "source node 4 is out of range");
  EXPECT_EQ(model.arrival({0, 1, kBytes, 0.0}), 1.0 + kLatency);
}

TEST(NetworkCongestionAware, AnEmptyMessageOccupiesNoLinkTime) {
  CongestionAwareModel model(ring(DimensionKind::ring, 4));
  std::vector<Transfer> flows{{0, 1, kBytes, 0.0}, {0, 1, 0, 0.5}, {0, 1, kBytes, 0.5}};
  EXPECT_EQ(model.arrivals(flows), (std::vector<double>{1.25, 0.75, 2.25}));
}

// A bidirectional exchange (every node sends T to each neighbour) on a
// unidirectional ring of 4: the message to the left neighbour goes 3 hops
// forward and meets the others. Hand-computed in canonical order with T = 1,
// latency a = 0.25 (links Lk = k -> k+1):
//   0->1  L0 [0,1)                                         1 + a     = 1.25
//   0->3  L0 [1,2)  L1 [2+a,3+a)  L2 [3+2a,4+2a)           4 + 3a    = 4.75
//   1->0  L1 [0,1)  L2 [1+a,2+a)  L3 [2+2a,3+2a)           3 + 3a    = 3.75
//   1->2  L1 [1,2)                                         2 + a     = 2.25
//   2->1  L2 [0,1)  L3 [1+a,2+a)  L0 [2+2a,3+2a)           3 + 3a    = 3.75
//   2->3  L2 [2+a,3+a)                                     3 + 2a    = 3.5
//   3->0  L3 [0,1)                                         1 + a     = 1.25
//   3->2  L3 [3+2a,4+2a)  L0 [4+3a,5+3a)  L1 [5+4a,6+4a)   6 + 5a    = 7.25
// On a bidirectional ring every message takes one hop on its own link: 1 + a.
TEST(NetworkCongestionAware, ABidirectionalExchangeOnAUnidirectionalRingQueues) {
  std::vector<Transfer> exchange;
  for (int i = 0; i < 4; ++i) {
    exchange.push_back({i, (i + 1) % 4, kBytes, 0.0});
    exchange.push_back({i, (i + 3) % 4, kBytes, 0.0});
  }
  CongestionAwareModel uni(ring(DimensionKind::ring, 4));
  EXPECT_EQ(uni.arrivals(exchange),
            (std::vector<double>{1.25, 4.75, 2.25, 3.75, 3.5, 3.75, 1.25, 7.25}));
  CongestionAwareModel bi(ring(DimensionKind::bidirectional_ring, 4));
  EXPECT_EQ(bi.arrivals(exchange), std::vector<double>(8, 1.25));
}

}  // namespace
}  // namespace meshsim::congestion_aware_model_test
