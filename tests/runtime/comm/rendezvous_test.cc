// Calls are compared field by field (issue 9 item 7): calls that differ fail
// the meeting with one CollectiveMismatchError on every member, before a
// leader step reads any peer's buffer — in leaderless groups (every member
// compares) and counting ones (the leader compares) alike.

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/comm/internal/rendezvous.h"
#include "meshsim/runtime/exec/errors.h"
#include "support/run_members.h"

namespace meshsim::rendezvous_test {
namespace {

TEST(CollectiveCallTest, SameAsComparesEveryField) {
  const Shape s4 = {4}, s5 = {5}, s41 = {4, 1};
  const std::vector<int64_t> list_a = {0, 1}, list_b = {1, 0};
  const CollectiveCall base = CollectiveCall("psum", DType::kFloat32, s4).param("axis", 0);
  EXPECT_TRUE(base.same_as(CollectiveCall("psum", DType::kFloat32, s4).param("axis", 0)));
  EXPECT_FALSE(base.same_as(CollectiveCall("pmax", DType::kFloat32, s4).param("axis", 0)));
  EXPECT_FALSE(base.same_as(CollectiveCall("psum", DType::kInt32, s4).param("axis", 0)));
  EXPECT_FALSE(base.same_as(CollectiveCall("psum", DType::kFloat32, s5).param("axis", 0)));
  EXPECT_FALSE(base.same_as(CollectiveCall("psum", DType::kFloat32, s41).param("axis", 0)));
  EXPECT_FALSE(base.same_as(CollectiveCall("psum", DType::kFloat32, s4).param("axis", 1)));
  EXPECT_FALSE(base.same_as(CollectiveCall("psum", DType::kFloat32, s4).param("dim", 0)));
  EXPECT_FALSE(base.same_as(CollectiveCall("psum", DType::kFloat32, s4)));
  CollectiveCall with_a = base, with_b = base;
  with_a.list_name = with_b.list_name = "perm";
  with_a.list = list_a;
  with_b.list = list_b;
  EXPECT_TRUE(with_a.same_as(with_a));
  EXPECT_FALSE(with_a.same_as(with_b));
  EXPECT_FALSE(with_a.same_as(base));
}

TEST(CollectiveCallTest, ParamPastTheLimitIsAUsageError) {
  CollectiveCall call("op", DType::kFloat32, {});
  for (int i = 0; i < CollectiveCall::kMaxParams; ++i) call.param("p", i);
  EXPECT_THROW(call.param("one_too_many", 1), RuntimeUsageError);
  EXPECT_EQ(call.num_params, CollectiveCall::kMaxParams);
}

using test_support::run_members;

std::vector<int> ids(int n) {
  std::vector<int> out(n);
  for (int i = 0; i < n; ++i) out[i] = 10 + i;
  return out;
}

// Member 0 calls psum on (4), the others on (1 << 20); with a shape of rank 9
// (`deep`), too deep for a leaderless post, the counting meeting compares.
void expect_mismatch_everywhere(int n, bool deep) {
  Rendezvous rendezvous(ids(n), "test group");
  EXPECT_EQ(rendezvous.leaderless(), n <= Exchange::kMaxMembers);
  const Shape small = deep ? Shape(9, 1) : Shape{4};
  const Shape large = {1 << 20};
  const std::string expected = deep ? "device 10 called psum(float32(1, 1, 1, 1, 1, 1, 1, 1, 1)) "
                                      "but device 11 called psum(float32(1048576))"
                                    : "device 10 called psum(float32(4)) but device 11 called "
                                      "psum(float32(1048576))";
  std::atomic<int> mismatches{0};
  std::atomic<bool> leader_step_ran{false};
  run_members(n, [&](int rank, Waiter& waiter) {
    Rendezvous::Slot& slot = rendezvous.slot(rank);
    const CollectiveCall call("psum", DType::kFloat32, rank == 0 ? small : large);
    slot.publish(call, nullptr, nullptr);
    try {
      rendezvous.meet(rank, waiter, [&] { leader_step_ran = true; });
    } catch (const CollectiveMismatchError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      ++mismatches;
    }
  });
  EXPECT_EQ(mismatches.load(), n);
  EXPECT_FALSE(leader_step_ran.load());
}

TEST(RendezvousTest, DifferentShapesAreAMismatchOnEveryMemberOfALeaderlessGroup) {
  expect_mismatch_everywhere(2, false);
  expect_mismatch_everywhere(Exchange::kMaxMembers, false);
}

TEST(RendezvousTest, DifferentShapesAreAMismatchOnEveryMemberOfACountingGroup) {
  expect_mismatch_everywhere(Exchange::kMaxMembers + 1, false);
  expect_mismatch_everywhere(17, false);  // arrivals counted in blocks
}

TEST(RendezvousTest, ACallTooLargeToPostIsComparedByTheCountingMeeting) {
  expect_mismatch_everywhere(2, true);
  expect_mismatch_everywhere(4, true);
}

// After a mismatch the group is still in step: the next meeting works, with a
// leader step that runs exactly once.
TEST(RendezvousTest, AGroupMeetsAgainAfterAMismatch) {
  for (const int n : {2, Exchange::kMaxMembers + 1, 17}) {
    Rendezvous rendezvous(ids(n), "test group");
    const Shape s4 = {4}, s5 = {5};
    std::atomic<int> mismatches{0}, leader_steps{0};
    run_members(n, [&](int rank, Waiter& waiter) {
      const CollectiveCall differing("psum", DType::kFloat32, rank == 1 ? s5 : s4);
      rendezvous.slot(rank).publish(differing, nullptr, nullptr);
      try {
        rendezvous.meet(rank, waiter);
      } catch (const CollectiveMismatchError&) {
        ++mismatches;
      }
      const CollectiveCall same("psum", DType::kFloat32, s4);
      rendezvous.slot(rank).publish(same, nullptr, nullptr);
      rendezvous.meet(rank, waiter, [&] { ++leader_steps; });
      rendezvous.arrive(rank, waiter);
    });
    EXPECT_EQ(mismatches.load(), n) << n;
    EXPECT_EQ(leader_steps.load(), 1) << n;
  }
}

// A counting group of 16 or more members counts its arrivals in blocks of
// consecutive ranks, the last block short when the size is no square: at
// every meeting the leader step runs once, and only after every member
// arrived. The members' writes are plain ints, so under ThreadSanitizer the
// test also checks that each arrival is ordered before the leader's reads.
// (A block counter left unreset would hang it rather than fail it.)
TEST(RendezvousTest, ALargeGroupReleasesOnlyOnceEveryMemberArrived) {
  for (const int n : {15, 16, 17, 50, 64}) {
    Rendezvous rendezvous(ids(n), "test group");
    std::vector<int> round_of(n, 0);
    int leader_steps = 0, early = 0;
    constexpr int kRounds = 100;
    run_members(n, [&](int rank, Waiter& waiter) {
      const CollectiveCall call("psum", DType::kFloat32, {});
      for (int round = 1; round <= kRounds; ++round) {
        round_of[rank] = round;
        rendezvous.slot(rank).publish(call, nullptr, nullptr);
        rendezvous.meet(rank, waiter, [&] {
          ++leader_steps;
          for (int r = 0; r < n; ++r) early += round_of[r] != round ? 1 : 0;
        });
      }
    });
    EXPECT_EQ(leader_steps, kRounds) << n;
    EXPECT_EQ(early, 0) << n;
  }
}

// A group compares the calls of a loop's repeats cheaply (each member against
// its own last call, when the last meeting's calls were all equal), still
// exactly: a member that changes its call, after a run of equal meetings, a
// mismatch, or a meeting of calls too deep to post, is a mismatch everywhere,
// and so is a mismatch every member repeats (rounds 3-5: a leaderless group
// posts by parity, so round 5 repeats round 3).
TEST(RendezvousTest, RepeatedCallsAreStillComparedExactly) {
  const Shape a = {4}, b = {5}, deep(9, 1);
  // Round r: member 1 calls rounds[r].odd, every other member rounds[r].rest.
  struct Round {
    const Shape* rest;
    const Shape* odd;
  };
  const std::vector<Round> rounds = {{&a, &a}, {&a, &a}, {&a, &a}, {&a, &b}, {&a, &b},
                                     {&a, &b}, {&a, &a}, {&deep, &deep}, {&a, &b},
                                     {&deep, &deep}, {&deep, &deep}, {&a, &b}, {&b, &b},
                                     {&b, &a}};
  for (const int n : {3, Exchange::kMaxMembers + 2, 17}) {
    Rendezvous rendezvous(ids(n), "test group");
    std::vector<std::atomic<int>> mismatches(rounds.size());
    run_members(n, [&](int rank, Waiter& waiter) {
      for (size_t r = 0; r < rounds.size(); ++r) {
        const CollectiveCall call("psum", DType::kFloat32,
                                  rank == 1 ? *rounds[r].odd : *rounds[r].rest);
        rendezvous.slot(rank).publish(call, nullptr, nullptr);
        try {
          rendezvous.meet(rank, waiter);
        } catch (const CollectiveMismatchError&) {
          ++mismatches[r];
        }
      }
    });
    for (size_t r = 0; r < rounds.size(); ++r) {
      EXPECT_EQ(mismatches[r].load(), rounds[r].rest == rounds[r].odd ? 0 : n)
          << "group of " << n << ", round " << r;
    }
  }
}

// meet_sharing hands every member each peer's bytes in a leaderless group
// (and reports it did not share in a counting one, which still meets).
TEST(RendezvousTest, MeetSharingSharesOnlyInLeaderlessGroups) {
  for (const int n : {3, Exchange::kMaxMembers + 1}) {
    Rendezvous rendezvous(ids(n), "test group");
    const Shape s = {1};
    std::atomic<int> shared{0}, right{0};
    run_members(n, [&](int rank, Waiter& waiter) {
      const int32_t mine = 100 + rank;
      const CollectiveCall call("psum", DType::kInt32, s);
      rendezvous.slot(rank).publish(call, &mine, nullptr);
      if (!rendezvous.meet_sharing(rank, waiter, std::as_bytes(std::span(&mine, 1)))) {
        rendezvous.arrive(rank, waiter);
        return;
      }
      ++shared;
      for (int r = 0; r < n; ++r) {
        int32_t theirs;
        std::memcpy(&theirs, rendezvous.shared_row(rank)[r], sizeof(theirs));
        if (theirs == 100 + r) ++right;
      }
    });
    const bool leaderless = n <= Exchange::kMaxMembers;
    EXPECT_EQ(shared.load(), leaderless ? n : 0) << n;
    EXPECT_EQ(right.load(), leaderless ? n * n : 0) << n;
  }
}

}  // namespace
}  // namespace meshsim::rendezvous_test
