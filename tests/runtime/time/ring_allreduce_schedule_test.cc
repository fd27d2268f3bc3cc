// A ring all-reduce's 2(p-1) steps as a script of transfers priced by the
// models: every device sends one chunk of n/p bytes to its right neighbour,
// departing when it received the previous step's chunk. On a ring topology
// that matches the algorithm it takes exactly 2(p-1)(a + n/p b) on both
// models. A bidirectional ring all-reduce (half of each chunk each way)
// takes 2(p-1)(a + n/(2p) b) on a bidirectional ring and longer on a
// unidirectional one. a = 2^-10 s, b = 2^-20 s/byte: every value is exact.

#include <gtest/gtest.h>

#include <vector>

#include "meshsim/runtime/time/congestion_aware_model.h"
#include "meshsim/runtime/time/congestion_unaware_model.h"
#include "support/ring_step_schedule.h"

namespace meshsim::ring_allreduce_schedule_test {
namespace {

constexpr double kAlpha = 1.0 / 1024;
constexpr double kBandwidth = 1 << 20;  // b = 1 / kBandwidth

Topology ring_of(DimensionKind kind, int p) { return Topology({{kind, p, kBandwidth, kAlpha}}); }

class RingAllReduceSchedule : public ::testing::TestWithParam<int> {};

TEST_P(RingAllReduceSchedule, TakesTwoPMinusOneAlphaPlusChunkBeta) {
  const int p = GetParam();
  for (int64_t n : {int64_t{p} * 1024, int64_t{p} * 3 * 4096, int64_t{p} << 20}) {
    const double expected = 2 * (p - 1) * (kAlpha + static_cast<double>(n / p) / kBandwidth);
    CongestionUnawareModel unaware(ring_of(DimensionKind::ring, p));
    EXPECT_EQ(run_steps(unaware, p, 2 * (p - 1), n / p, {1}), expected) << "n=" << n;
    CongestionAwareModel aware(ring_of(DimensionKind::ring, p));
    EXPECT_EQ(run_steps(aware, p, 2 * (p - 1), n / p, {1}), expected) << "n=" << n;
    // Every message goes forward: a bidirectional ring changes nothing.
    CongestionAwareModel aware_bi(ring_of(DimensionKind::bidirectional_ring, p));
    EXPECT_EQ(run_steps(aware_bi, p, 2 * (p - 1), n / p, {1}), expected) << "n=" << n;
  }
}

TEST_P(RingAllReduceSchedule, BidirectionalHalvesTheBandwidthTermOnABidirectionalRing) {
  const int p = GetParam();
  const int64_t n = int64_t{p} << 20;
  const int64_t half_chunk = n / p / 2;
  const double two_way = 2 * (p - 1) * (kAlpha + static_cast<double>(half_chunk) / kBandwidth);
  CongestionAwareModel bi(ring_of(DimensionKind::bidirectional_ring, p));
  CongestionAwareModel uni(ring_of(DimensionKind::ring, p));
  double on_bi = run_steps(bi, p, 2 * (p - 1), half_chunk, {1, p - 1});
  double on_uni = run_steps(uni, p, 2 * (p - 1), half_chunk, {1, p - 1});
  if (p == 2) {
    // Both neighbours are node 1, reached forward (the tie-break) on either
    // ring: the two halves share one link, as the one-way ring all-reduce.
    const double one_way =
        2 * (p - 1) * (kAlpha + static_cast<double>(2 * half_chunk) / kBandwidth);
    EXPECT_EQ(on_bi, one_way);
    EXPECT_EQ(on_uni, one_way);
  } else {
    EXPECT_EQ(on_bi, two_way);
    // The left-going halves take p-1 hops forward: every step takes at least
    // their store-and-forward time, p-1 times a one-hop step.
    EXPECT_GE(on_uni, (p - 1) * two_way);
  }
}

INSTANTIATE_TEST_SUITE_P(Network, RingAllReduceSchedule, ::testing::Values(2, 4, 8, 16));

}  // namespace
}  // namespace meshsim::ring_allreduce_schedule_test
