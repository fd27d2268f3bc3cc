// Exchange, the leaderless meeting of small groups: posts are double-buffered,
// so a peer's shared bytes must stay intact until the reader's next meeting
// however far ahead the fastest member runs. Checked against the bytes each
// member wrote, over thousands of meetings whose sizes cross every boundary
// (inline in the word's line, in the extra buffer, too large to share), and
// aligned for any element type, also where a member shares from an odd address
// (its own entry is then its post's copy; otherwise its own buffer).

#include "meshsim/runtime/comm/internal/exchange.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/errors.h"
#include "support/run_members.h"

namespace meshsim::exchange_test {
namespace {

using test_support::run_members;

// The byte member `rank` writes at `i` in meeting `m`.
std::byte pattern(int m, int rank, size_t i) {
  return static_cast<std::byte>((m * 31 + rank * 7 + static_cast<int>(i)) & 0xff);
}

constexpr size_t kSizes[] = {0, 1, 8, 48, 49, 64, 1024, Exchange::kMaxShared,
                             Exchange::kMaxShared + 1};

TEST(ExchangeTest, SharedBytesAreEveryMembersOwnAtEveryMeeting) {
  for (const int n : {2, 3, Exchange::kMaxMembers}) {
    Exchange exchange(n);
    constexpr int kMeetings = 3000;
    std::atomic<int> wrong{0}, shared{0}, met{0};
    run_members(n, [&](int rank, Waiter& waiter) {
      std::vector<std::byte> buffer(Exchange::kMaxShared + 2);
      const Shape shape = {1};
      for (int m = 0; m < kMeetings; ++m) {
        const size_t bytes = kSizes[m % std::size(kSizes)];
        std::byte* const mine = buffer.data() + (m % 4 == 1 ? 1 : 0);  // new[]: aligned
        for (size_t i = 0; i < bytes; ++i) mine[i] = pattern(m, rank, i);
        const CollectiveCall call("psum", DType::kUInt8, shape);
        // Every third meeting is a barrier, which carries no call.
        const bool barrier = m % 3 == 2;
        const Exchange::Outcome outcome = exchange.meet(
            rank, waiter,
            {barrier ? nullptr : &call, !barrier, {mine, bytes}});
        if (barrier || bytes > Exchange::kMaxShared) {
          if (outcome != Exchange::Outcome::kMet) ++wrong;
          ++met;
          continue;
        }
        if (outcome != Exchange::Outcome::kShared) {
          ++wrong;
          continue;
        }
        ++shared;
        for (int r = 0; r < n; ++r) {
          const std::byte* theirs = exchange.shared_row(rank)[r];
          // Members read shared data as typed arrays (float64 psum).
          if (reinterpret_cast<uintptr_t>(theirs) % alignof(std::max_align_t) != 0) ++wrong;
          if (r == rank && bytes > 0 && (theirs == mine) != (m % 4 != 1)) ++wrong;
          for (size_t i = 0; i < bytes; ++i) {
            if (theirs[i] != pattern(m, r, i)) {
              ++wrong;
              break;
            }
          }
        }
      }
    });
    EXPECT_EQ(wrong.load(), 0) << n;
    EXPECT_GT(shared.load(), 0);
    EXPECT_EQ(shared.load() + met.load(), n * kMeetings);
  }
}

TEST(ExchangeTest, EveryMemberSeesTheSameMismatch) {
  constexpr int n = 4;
  Exchange exchange(n);
  const Shape s4 = {4}, s5 = {5};
  std::atomic<int> mismatches{0}, first{0};
  run_members(n, [&](int rank, Waiter& waiter) {
    // Members 2 and 3 differ from member 0; every member must name member 2.
    const CollectiveCall call("psum", DType::kFloat32, rank >= 2 ? s5 : s4);
    if (exchange.meet(rank, waiter, {&call, false, {}}) != Exchange::Outcome::kMismatch) return;
    ++mismatches;
    if (exchange.mismatch(rank) == 2 && exchange.call(rank, 2).same_as(call) == (rank >= 2)) {
      ++first;
    }
  });
  EXPECT_EQ(mismatches.load(), n);
  EXPECT_EQ(first.load(), n);
}

TEST(ExchangeTest, ACallThatDoesNotFitIsUncheckedOnEveryMember) {
  constexpr int n = 3;
  Exchange exchange(n);
  const Shape deep(StoredCall::kMaxRank + 1, 1), flat = {1};
  std::atomic<int> unchecked{0};
  run_members(n, [&](int rank, Waiter& waiter) {
    const CollectiveCall call("psum", DType::kFloat32, rank == 1 ? deep : flat);
    if (exchange.meet(rank, waiter, {&call, false, {}}) == Exchange::Outcome::kUnchecked) {
      ++unchecked;
    }
  });
  EXPECT_EQ(unchecked.load(), n);
}

// A member that got one meeting ahead before an abort leaves the posts out of
// step; reset() puts every member back at meeting 0.
TEST(ExchangeTest, ResetBringsMembersBackInStep) {
  Exchange exchange(2);
  const Shape s = {1};
  const CollectiveCall call("psum", DType::kFloat32, s);
  {
    // Member 0 posts, then finds the launch aborted while member 1 never came.
    const std::atomic<bool> aborted{true};
    Waiter waiter;
    waiter.attach(&aborted, nullptr);
    EXPECT_THROW(exchange.meet(0, waiter, {&call, false, {}}), CancelledError);
  }
  exchange.reset();
  std::atomic<int> met{0};
  run_members(2, [&](int rank, Waiter& waiter) {
    for (int m = 0; m < 100; ++m) {
      if (exchange.meet(rank, waiter, {&call, false, {}}) == Exchange::Outcome::kMet) ++met;
    }
  });
  EXPECT_EQ(met.load(), 200);
}

}  // namespace
}  // namespace meshsim::exchange_test
