// The built-in barrier algorithm (dissemination): no member passes before
// every member has arrived, over many rounds and group sizes 1, 2, 3, 5, 8 and
// 64, and the record of what ran when barrier() is forced to it.
//
// The barrier front-end meets the group before any algorithm runs, so a
// broken algorithm would still pass through barrier(). The arrival check
// therefore runs the algorithm inside one call of a probe algorithm
// registered for all_gather, on that call's Communicator: rounds of
// "store, dissemination, check" with no other synchronisation.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/barrier.h"
#include "meshsim/meshsim.h"

namespace meshsim::barrier_algorithms_test {
namespace {

// Round k: every member stores k in its own slot, passes the barrier, then
// reads every slot: a slot below k belongs to a member that has not arrived
// yet, which the barrier forbids. (A member already in round k+1 has stored
// k+1: still >= k.) In round k member k mod n arrives last on purpose: it
// stores only once every other member has entered the barrier, so a barrier
// that lets anyone through before that member arrives is caught in practice
// (without sleeps: the late member waits for an event, not for time).
void check_arrivals(int n) {
  constexpr int kRounds = 100;
  Runtime rt(n);
  std::vector<std::atomic<int>> slots(n);
  for (auto& s : slots) s.store(-1);
  std::vector<std::atomic<int>> entered(kRounds);
  std::atomic<int> early{0};
  Algorithm<AllGatherArgs> probe;
  probe.name = "barrier_probe";
  probe.description = "rounds of store, barrier dissemination, check";
  probe.cost_formula = "-";
  probe.cost = [](const CallShape&) { return CostTerms{}; };
  probe.run = [&](Communicator& comm, const AllGatherArgs&) {
    const auto dissemination = builtin::barrier_dissemination();
    for (int k = 0; k < kRounds; ++k) {
      if (comm.rank() == k % n) {
        while (entered[k].load() < n - 1) comm.context().yield();  // a fiber worker runs the others
      }
      slots[comm.rank()].store(k);
      entered[k].fetch_add(1);
      dissemination.run(comm, BarrierArgs{});
      for (const auto& s : slots) {
        if (s.load() < k) early.fetch_add(1);
      }
    }
  };
  algorithm_registry(rt).add(std::move(probe));
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    all_gather(ctx, Array::zeros({1}, DType::kInt32), "x",
               AllGatherOptions{.algorithm = "barrier_probe"});
  });
  EXPECT_EQ(early.load(), 0) << "members passed before every member arrived";
  for (const auto& s : slots) EXPECT_EQ(s.load(), kRounds - 1);
}

// barrier() forced to dissemination runs it, and every member returns.
void check_record(int n) {
  Runtime rt(n);
  std::vector<std::string> records(n);
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    barrier(ctx, "x", {}, "dissemination");
    const auto record = ctx.collective_records().back();
    records[ctx.position()] = std::string(record.collective) + "/" + std::string(record.algorithm) +
                              "/" + std::to_string(record.group_size);
  });
  for (int p = 0; p < n; ++p) {
    EXPECT_EQ(records[p], "barrier/dissemination/" + std::to_string(n)) << "device " << p;
  }
}

class BarrierAlgorithmTest : public ::testing::TestWithParam<int> {};

TEST_P(BarrierAlgorithmTest, NoMemberPassesEarly) { check_arrivals(GetParam()); }

TEST_P(BarrierAlgorithmTest, RecordsDissemination) { check_record(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Dissemination, BarrierAlgorithmTest, ::testing::Values(1, 2, 3, 5, 8, 64));

}  // namespace
}  // namespace meshsim::barrier_algorithms_test
