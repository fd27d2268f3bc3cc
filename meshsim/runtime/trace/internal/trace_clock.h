#pragma once
// TraceClock: the wall clock of trace events. A traced collective reads it
// twice on every device (DeviceTrace::open and close), so reading it must be
// cheap: on x86-64 with an invariant time-stamp counter (constant rate,
// counting in every power state, the same on every core) it is the counter,
// ~10 ns a read here against ~27 ns for steady_clock through the guest's
// kvm-clock; elsewhere it is steady_clock's nanoseconds. Readings become
// nanoseconds only when a launch's events are exported.

#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace meshsim {

class TraceClock {
 public:
  using Ticks = uint64_t;

  // Now, in ticks. Any thread; nothing shared is written.
  static Ticks now() {
#if defined(__x86_64__)
    static const bool counter = uses_counter();
    if (counter) return __rdtsc();
#endif
    return steady_ns();
  }

  // Now, at the start of a traced launch: also starts measuring the rate of
  // ticks, the first time.
  static Ticks launch_origin();

  // Nanoseconds per tick, measured against steady_clock from the first
  // launch_origin() (or this call) of the process to this call, so it
  // sharpens as the process runs. A call less than 1 ms after the start
  // waits out the rest of that 1 ms (an error of about 10^-4 from
  // steady_clock's read time); later calls never wait. 1 when the clock is
  // steady_clock. Any thread.
  static double ns_per_tick();

  // Whether now() reads the time-stamp counter (else steady_clock).
  static bool uses_counter();
  // steady_clock now, in nanoseconds since its epoch.
  static uint64_t steady_ns();
};

}  // namespace meshsim
