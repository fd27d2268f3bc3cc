// LinkSchedule against hand-placed bookings: back to back, gaps that fit and
// gaps that do not, zero durations, merging of touching intervals.

#include "meshsim/runtime/time/internal/link_schedule.h"

#include <gtest/gtest.h>

namespace meshsim::link_schedule_test {
namespace {

TEST(NetworkLinkSchedule, BooksAnIdleLinkAtOnce) {
  LinkSchedule link;
  EXPECT_EQ(link.book(3, 2), 3);
}

TEST(NetworkLinkSchedule, QueuesBehindABookingAndMergesTouchingOnes) {
  LinkSchedule link;
  EXPECT_EQ(link.book(0, 2), 0);
  EXPECT_EQ(link.book(1, 2), 2);
  EXPECT_EQ(link.book(0, 1), 4);
  EXPECT_EQ(link.intervals(), 1u);  // [0, 5)
  EXPECT_EQ(link.book(5, 1), 5);
  EXPECT_EQ(link.intervals(), 1u);
}

TEST(NetworkLinkSchedule, UsesAGapOnlyIfTheWholeDurationFits) {
  LinkSchedule link;
  EXPECT_EQ(link.book(4, 2), 4);  // [4, 6)
  EXPECT_EQ(link.book(0, 3), 0);  // fits before it: [0, 3)
  EXPECT_EQ(link.book(0, 2), 6);  // the gap [3, 4) is too short
  EXPECT_EQ(link.book(2, 1), 3);  // [3, 4) fits exactly, and everything merges
  EXPECT_EQ(link.intervals(), 1u);
  EXPECT_EQ(link.book(0, 1), 8);
}

TEST(NetworkLinkSchedule, StartsInsideABookingAtItsEnd) {
  LinkSchedule link;
  link.book(0, 10);
  EXPECT_EQ(link.book(5, 1), 10);
}

TEST(NetworkLinkSchedule, AZeroDurationBooksNothing) {
  LinkSchedule link;
  link.book(0, 10);
  EXPECT_EQ(link.book(5, 0), 5);
  EXPECT_EQ(link.intervals(), 1u);
}

TEST(NetworkLinkSchedule, ForgetsOnlyBookingsThatEndByTheGivenTime) {
  LinkSchedule link;
  link.book(0, 1);  // [0, 1)
  link.book(2, 1);  // [2, 3)
  link.book(5, 1);  // [5, 6)
  link.forget_before(3);
  EXPECT_EQ(link.intervals(), 1u);
  EXPECT_EQ(link.book(3, 2), 3);  // [3, 5) is free
  EXPECT_EQ(link.book(3, 1), 6);  // [5, 6) is still booked
}

}  // namespace
}  // namespace meshsim::link_schedule_test
