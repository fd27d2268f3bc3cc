#pragma once
// Shared by the bench suites: a wall clock for manual timing. The references
// results are read against (memcpy, meeting floor) are tools/bench_machine.h,
// shared with `meshsim bench`.

#include <chrono>

namespace meshsim::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace meshsim::bench
