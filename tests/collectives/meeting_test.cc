// Meeting::meet_sharing_making: a member makes its result between posting and
// waiting for its peers. A make() that throws must still leave the meeting
// complete on that member, or its next post would overwrite a post a slower
// peer has yet to read (the posts are double-buffered on every member
// waiting), and, where peers read its input in place, must depart with them
// before its input is freed. Checked over thousands of meetings in which
// members fail by turns, catch the error and go on: every value read must be
// the one its member posted in that meeting, and the launch must neither hang
// nor fail.

#include "meshsim/collectives/internal/meeting.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "meshsim/meshsim.h"

namespace meshsim::meeting_test {
namespace {

// What member `rank` posts at meeting `m`, element `i`.
int64_t posted(int m, int rank, size_t i) { return (int64_t{m} * 1000 + rank) * 8 + i % 8; }

// Inputs of 8 bytes travel in the posts (shared); of 4 KiB, past
// Exchange::kMaxShared, peers read them in place until everyone departs. The
// input lives on the heap for its meeting only, so a failing member that
// unwound before its peers were done reading would be a use-after-free
// (the AddressSanitizer job runs this suite).
TEST(MeetingTest, AMemberWhoseResultFailsStillCompletesTheMeeting) {
  for (const size_t elements : {size_t{1}, size_t{512}}) {
    for (const int n : {2, 3, 8}) {
      // A member that skipped its wait or its departure would hang or
      // misread: the timeout turns a hang into a failure.
      Runtime rt(n, {.launch_timeout = std::chrono::seconds(60)});
      const Mesh mesh = Mesh::make({{"x", n}});
      constexpr int kMeetings = 2000;
      std::atomic<int> wrong{0}, failed{0}, made{0}, unshared{0};
      rt.launch(mesh, [&](DeviceContext& ctx) {
        const int me = ctx.position();
        const Shape shape = {static_cast<int64_t>(elements)};
        for (int m = 0; m < kMeetings; ++m) {
          std::vector<int64_t> input(elements);
          for (size_t i = 0; i < elements; ++i) input[i] = posted(m, me, i);
          Meeting meeting(ctx, "x", {}, "meeting_test");
          const CollectiveCall call("meeting_test", DType::kInt64, shape);
          meeting.publish(call, input.data(), nullptr);
          try {
            // Each member fails three meetings in a row, in turn.
            const int result = meeting.meet_sharing_making(elements * sizeof(int64_t), [&] {
              if ((m / 3 + me) % 4 == 0) throw std::runtime_error("no result");
              return m;
            });
            if (result != m) ++wrong;
            ++made;
          } catch (const std::runtime_error&) {
            ++failed;
            continue;
          }
          for (int r = 0; r < n; ++r) {
            const auto* theirs = static_cast<const int64_t*>(meeting.input(r));
            for (size_t i = 0; i < elements; ++i) {
              if (theirs[i] != posted(m, r, i)) {
                ++wrong;
                break;
              }
            }
          }
          if (!meeting.inputs_shared()) {
            ++unshared;
            meeting.arrive();  // peers read this input in place until here
          }
        }
      });
      EXPECT_EQ(wrong.load(), 0) << n << " members, " << elements << " elements";
      EXPECT_GT(failed.load(), 0);
      EXPECT_EQ(failed.load() + made.load(), n * kMeetings);
      EXPECT_EQ(unshared.load() > 0, elements > 1) << elements;
    }
  }
}

}  // namespace
}  // namespace meshsim::meeting_test
