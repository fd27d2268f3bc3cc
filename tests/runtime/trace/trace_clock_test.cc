#include "meshsim/runtime/trace/internal/trace_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace meshsim {
namespace {

// The rate measured against steady_clock converts a span of ticks to the
// nanoseconds steady_clock saw: the ticks are read inside two steady_clock
// readings and outside two others, so the converted span lies between the
// inner and the outer steady_clock spans, within the rate's error (10^-3
// here is ten times what ns_per_tick promises after 1 ms).
TEST(TraceClockTest, TicksConvertToTheNanosecondsSteadyClockSaw) {
  for (int round = 0; round < 3; ++round) {
    const uint64_t outer_start = TraceClock::steady_ns();
    const TraceClock::Ticks start = TraceClock::now();
    const uint64_t inner_start = TraceClock::steady_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t inner_end = TraceClock::steady_ns();
    const TraceClock::Ticks end = TraceClock::now();
    const uint64_t outer_end = TraceClock::steady_ns();

    const double rate = TraceClock::ns_per_tick();
    ASSERT_GT(rate, 0.0);
    const double span = static_cast<double>(end - start) * rate;
    EXPECT_GE(span, static_cast<double>(inner_end - inner_start) * (1 - 1e-3)) << "round " << round;
    EXPECT_LE(span, static_cast<double>(outer_end - outer_start) * (1 + 1e-3)) << "round " << round;
  }
}

TEST(TraceClockTest, NeverGoesBackOnOneThread) {
  TraceClock::Ticks last = TraceClock::now();
  for (int i = 0; i < 100'000; ++i) {
    const TraceClock::Ticks t = TraceClock::now();
    ASSERT_GE(t, last);
    last = t;
  }
}

}  // namespace
}  // namespace meshsim
