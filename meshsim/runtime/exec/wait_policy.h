#pragma once
// WaitPolicy: how long a device thread spins and yields before it blocks on a
// futex when it waits inside meshsim (RuntimeOptions::wait_policy overrides
// the default, for experiments). These are budgets: a waiter with a spin
// phase spins less, and yields not at all, while other processes load the
// machine (exec/internal/waiter.h).

#include <cstdint>

namespace meshsim {

// CPUs the calling thread may run on (its affinity mask, which a container
// or taskset narrows; not the machine's count), or, on a thread of a
// runtime, the runtime's (RuntimeOptions::bind_threads): what waits plan
// for. Read on a thread's first call and again whenever it makes a Runtime.
int usable_cores();

struct WaitPolicy {
  // The most either budget may be (RuntimeOptions::wait_policy): a waiter
  // that spins or yields is not yet blocked, so a deadlock is seen only once
  // its budgets ran out.
  static constexpr int64_t kMaxBudgetNs = 1'000'000'000;

  int64_t spin_ns = 0;
  int64_t yield_ns = 0;
  // The policy for `threads` runnable threads on `cores` CPUs (a runtime
  // passes its own): spin only when every thread can have a core, otherwise
  // go straight to yield.
  static WaitPolicy for_threads(int threads, int cores = usable_cores());
  // Between launches: stay responsive for a while (the next launch is often
  // right behind), but yield rather than spin, since the launching thread needs
  // a core to split inputs, gather outputs and post the next launch.
  // `threads` is the size of the launch just finished.
  static WaitPolicy idle_after(int threads, int cores = usable_cores());

  bool operator==(const WaitPolicy&) const = default;
};

}  // namespace meshsim
