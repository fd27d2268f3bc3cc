// Meeting::meet_sharing_making: a member makes its result between posting and
// waiting for its peers. A make() that throws must still leave the meeting
// complete on that member, or its next post would overwrite a post a slower
// peer has yet to read (the posts are double-buffered on every member
// waiting). Checked over thousands of meetings in which members fail by turns,
// catch the error and go on: every value read must be the one its member
// posted in that meeting, and the launch must neither hang nor fail.

#include "meshsim/collectives/internal/meeting.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>

#include "meshsim/meshsim.h"

namespace meshsim::meeting_test {
namespace {

// What member `rank` posts at meeting `m`.
int64_t posted(int m, int rank) { return int64_t{m} * 1000 + rank; }

TEST(MeetingTest, AMemberWhoseResultFailsStillCompletesTheMeeting) {
  for (const int n : {2, 3, 8}) {
    // A member that skipped its wait would hang or misread: the timeout
    // turns a hang into a failure.
    Runtime rt(n, {.launch_timeout = std::chrono::seconds(60)});
    const Mesh mesh = Mesh::make({{"x", n}});
    constexpr int kMeetings = 3000;
    std::atomic<int> wrong{0}, failed{0}, made{0};
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const int me = ctx.position();
      const Shape shape = {1};
      for (int m = 0; m < kMeetings; ++m) {
        const int64_t value = posted(m, me);
        Meeting meeting(ctx, "x", {}, "meeting_test");
        const CollectiveCall call("meeting_test", DType::kInt64, shape);
        meeting.publish(call, &value, nullptr);
        try {
          const int result = meeting.meet_sharing_making(sizeof value, [&] {
            if ((m + me) % 3 == 0) throw std::runtime_error("no result");
            return m;
          });
          if (result != m) ++wrong;
          ++made;
        } catch (const std::runtime_error&) {
          ++failed;
          continue;
        }
        for (int r = 0; r < n; ++r) {
          if (*static_cast<const int64_t*>(meeting.input(r)) != posted(m, r)) ++wrong;
        }
      }
    });
    EXPECT_EQ(wrong.load(), 0) << n;
    EXPECT_GT(failed.load(), 0) << n;
    EXPECT_EQ(failed.load() + made.load(), n * kMeetings) << n;
  }
}

// Where the group meets with a leader (more members than an Exchange takes),
// make() runs before the meeting and its error leaves the launch usable too.
TEST(MeetingTest, ALeaderGroupMakesTheResultBeforeMeeting) {
  constexpr int n = 12;
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n}});
  std::atomic<int> wrong{0};
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const int me = ctx.position();
    const Shape shape = {1};
    for (int m = 0; m < 50; ++m) {
      const int64_t value = posted(m, me);
      Meeting meeting(ctx, "x", {}, "meeting_test");
      const CollectiveCall call("meeting_test", DType::kInt64, shape);
      meeting.publish(call, &value, nullptr);
      if (meeting.meet_sharing_making(sizeof value, [&] { return m; }) != m) ++wrong;
      if (meeting.inputs_shared()) ++wrong;  // a leader group shares nothing
      for (int r = 0; r < n; ++r) {
        if (*static_cast<const int64_t*>(meeting.input(r)) != posted(m, r)) ++wrong;
      }
      meeting.arrive();  // inputs are read in place: depart before they change
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace meshsim::meeting_test
