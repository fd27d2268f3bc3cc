// The leader's call check does not rest on the 64-bit signature alone (issue 9
// item 7): calls whose signatures collide but whose fields differ still fail
// the meeting with CollectiveMismatchError, before the leader step reads any
// peer's buffer.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/comm/internal/rendezvous.h"
#include "meshsim/runtime/exec/errors.h"

namespace meshsim {
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

// Two members publish calls of different shapes, then force equal signatures
// (as a hash collision would): the meeting must still fail on both, and the
// leader step, which would read the peers' buffers, must not run.
TEST(RendezvousTest, EqualSignaturesWithDifferentShapesAreAMismatch) {
  Rendezvous rendezvous({0, 1}, "test group");
  const Shape small = {4}, large = {1 << 20};
  std::atomic<int> mismatches{0};
  std::atomic<bool> leader_step_ran{false};
  const auto member = [&](int rank) {
    Waiter waiter;
    Rendezvous::Slot& slot = rendezvous.slot(rank);
    slot.publish(CollectiveCall("psum", DType::kFloat32, rank == 0 ? small : large), nullptr,
                 nullptr);
    slot.signature = 0x5eed;  // a collision
    try {
      rendezvous.meet(waiter, [&] { leader_step_ran = true; });
    } catch (const CollectiveMismatchError& e) {
      EXPECT_NE(std::string(e.what()).find("float32(1048576)"), std::string::npos) << e.what();
      ++mismatches;
    }
  };
  std::thread other(member, 1);
  member(0);
  other.join();
  EXPECT_EQ(mismatches.load(), 2);
  EXPECT_FALSE(leader_step_ran.load());
}

}  // namespace
}  // namespace meshsim
