// CongestionUnawareModel against its closed form: departure + the route's
// latencies + bytes / the slowest link's bandwidth, on every kind. Powers of
// two make every value exact.

#include "meshsim/runtime/time/congestion_unaware_model.h"

#include <gtest/gtest.h>

#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/time/congestion_aware_model.h"
#include "meshsim/mesh/topology/topology_spec.h"
#include "support/expect_error.h"

namespace meshsim::congestion_unaware_model_test {
namespace {

TEST(NetworkCongestionUnaware, PricesHopsTimesLatencyPlusBytesOverBandwidth) {
  CongestionUnawareModel ring(Topology({{DimensionKind::ring, 8, 1024, 0.25}}));
  EXPECT_EQ(ring.arrival({0, 3, 2048, 1.0}), 1.0 + 3 * 0.25 + 2.0);
  EXPECT_EQ(ring.arrival({3, 0, 2048, 1.0}), 1.0 + 5 * 0.25 + 2.0);  // forward only
  CongestionUnawareModel biring(Topology({{DimensionKind::bidirectional_ring, 8, 1024, 0.25}}));
  EXPECT_EQ(biring.arrival({3, 0, 2048, 1.0}), 1.0 + 3 * 0.25 + 2.0);
  CongestionUnawareModel sw(Topology({{DimensionKind::switch_, 8, 1024, 0.25}}));
  EXPECT_EQ(sw.arrival({3, 0, 2048, 1.0}), 1.0 + 2 * 0.25 + 2.0);  // uplink + downlink
  CongestionUnawareModel fc(Topology({{DimensionKind::fully_connected, 8, 1024, 0.25}}));
  EXPECT_EQ(fc.arrival({3, 0, 2048, 1.0}), 1.0 + 0.25 + 2.0);
}

TEST(NetworkCongestionUnaware, StreamsAtTheSlowestLinkOfAHierarchy) {
  // 1 -> 2: ring hop (lat 0.5, 1024 B/s), then switch up + down (0.125 each, 256 B/s).
  CongestionUnawareModel model(
      parse_topology_spec("ring:2:bw=1KiB/s,lat=500ms;switch:2:bw=256B/s,lat=125ms"));
  EXPECT_EQ(model.arrival({1, 2, 512, 0.0}), 0.5 + 2 * 0.125 + 512.0 / 256);
}

TEST(NetworkCongestionUnaware, IgnoresOtherTrafficAndOrder) {
  CongestionUnawareModel model(Topology({{DimensionKind::ring, 4, 1, 1}}));
  EXPECT_EQ(model.arrival({0, 1, 4, 2.0}), 7.0);
  EXPECT_EQ(model.arrival({0, 1, 4, 0.0}), 5.0);  // an earlier departure after a later one
  EXPECT_EQ(model.arrival({0, 1, 4, 2.0}), 7.0);
}

// A bandwidth the topology accepts (positive, finite) may still be too small
// for a time to stay finite: the model names the transfer, not a later one.
TEST(NetworkCongestionUnaware, AnArrivalThatOverflowsIsAnError) {
  CongestionUnawareModel model(Topology({{DimensionKind::ring, 4, 4.9e-324, 1}}));
  EXPECT_ERROR(model.arrival({0, 1, 8, 0.0}), InvalidArgumentError,
               "congestion-unaware model: transfer 0 -> 1 (8 bytes, departing at 0 s, sequence 0) "
               "arrives at inf s");
  CongestionAwareModel aware(Topology({{DimensionKind::ring, 4, 1, 1e308}}));
  EXPECT_ERROR((void)aware.arrivals(std::vector<Transfer>{{0, 1, 8, 0.0}, {0, 2, 8, 0.0}}),
               InvalidArgumentError, "congestion-aware model: transfer 0 -> 2");
}

TEST(NetworkCongestionUnaware, AMessageToItselfArrivesAtDeparture) {
  CongestionUnawareModel model(Topology({{DimensionKind::ring, 4, 1, 1}}));
  EXPECT_EQ(model.arrival({2, 2, 1 << 20, 3.0}), 3.0);
  EXPECT_EQ(model.arrival({0, 1, 0, 3.0}), 4.0);  // an empty message pays the latency
}

TEST(NetworkCongestionUnaware, RejectsNodesOutOfTheTopology) {
  CongestionUnawareModel model(Topology({{DimensionKind::ring, 4, 1, 1}}));
  EXPECT_ERROR(model.arrival({0, 4, 1, 0.0}), InvalidArgumentError,
               "transfer 0 -> 4 (1 bytes, departing at 0 s, sequence 0): destination node 4 is "
               "out of range [0, 4) of topology ring:4:bw=1B/s,lat=1s");
  EXPECT_ERROR(model.check({-1, 0, 1, 0.0}), InvalidArgumentError, "source node -1");
  EXPECT_ERROR(model.arrival({0, 1, -2, 0.0}), InvalidArgumentError, "bytes must be >= 0");
}

}  // namespace
}  // namespace meshsim::congestion_unaware_model_test
