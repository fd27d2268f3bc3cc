#include "meshsim/runtime/trace/internal/trace_clock.h"

#include <chrono>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace meshsim {
namespace {

bool invariant_counter() {
#if defined(__x86_64__)
  // CPUID 0x80000007, EDX bit 8: the time-stamp counter is invariant.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

// The first reading of both clocks, the start of every rate measurement.
struct Calibration {
  uint64_t steady_ns;
  TraceClock::Ticks ticks;
};

}  // namespace

bool TraceClock::uses_counter() {
  static const bool invariant = invariant_counter();
  return invariant;
}

uint64_t TraceClock::steady_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

namespace {
const Calibration& calibration() {
  static const Calibration start{TraceClock::steady_ns(), TraceClock::now()};
  return start;
}
}  // namespace

TraceClock::Ticks TraceClock::launch_origin() {
  calibration();
  return now();
}

double TraceClock::ns_per_tick() {
  if (!uses_counter()) return 1.0;
  const Calibration& start = calibration();
  constexpr uint64_t kMinSpanNs = 1'000'000;
  uint64_t steady = steady_ns();
  Ticks ticks = now();
  while (steady - start.steady_ns < kMinSpanNs) {
    steady = steady_ns();
    ticks = now();
  }
  if (ticks <= start.ticks) return 1.0;  // a counter that did not move is no clock
  return static_cast<double>(steady - start.steady_ns) / static_cast<double>(ticks - start.ticks);
}

}  // namespace meshsim
