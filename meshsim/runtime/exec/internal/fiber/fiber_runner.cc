#include "meshsim/runtime/exec/internal/fiber/fiber_runner.h"

#include <sched.h>

#include <algorithm>

#include "meshsim/runtime/exec/internal/cpu_relax.h"
#include "meshsim/runtime/exec/internal/fiber/doorbell.h"

namespace meshsim {
namespace {

using namespace std::chrono_literals;

// While nothing can run: poll this long (a peer on another thread is often
// just about to release a fiber here), then yield the core this long (the
// launching thread or another runtime may need it), then sleep.
constexpr auto kPoll = 3us;
constexpr auto kYield = 50us;

}  // namespace

bool FiberRunner::resume_at(size_t i, Fiber::Wake why) {
  Fiber* fiber = fibers_[i];
  if (!fiber->resume(why, scan_)) return true;
  delete fiber;
  fibers_[i] = fibers_.back();
  fibers_.pop_back();
  return false;
}

bool FiberRunner::any_ready() {
  std::optional<Clock::time_point> now;
  return std::any_of(fibers_.begin(), fibers_.end(), [&](const Fiber* f) {
    return f->wake_reason(scan_, now) != Fiber::Wake::kStay;
  });
}

bool FiberRunner::step(FunctionRef<bool()> interrupted) {
  ++scan_;
  bool resumed = false;
  std::optional<Clock::time_point> now;
  for (size_t i = 0; i < fibers_.size();) {
    if (const Fiber::Wake why = fibers_[i]->wake_reason(scan_, now); why != Fiber::Wake::kStay) {
      resumed = true;
      if (!resume_at(i, why)) continue;
    }
    ++i;
  }
  if (resumed) {
    idle_ = false;
    return false;
  }

  // Nothing could run.
  const auto at = Clock::now();
  if (!idle_) {
    idle_ = true;
    idle_since_ = at;
  }
  if (at - idle_since_ < kPoll) {
    cpu_relax();
    return false;
  }
  if (at - idle_since_ < kPoll + kYield) {
    sched_yield();
    return false;
  }
  if (fibers_.empty()) {
    idle_ = false;  // the caller sleeps now
    return true;
  }
  sleep(interrupted);
  return false;
}

void FiberRunner::sleep(FunctionRef<bool()> interrupted) {
  // Before sleeping, every parked fiber announces its wait: from then on a
  // change to its word rings the doorbell.
  bool asked = false;
  for (size_t i = 0; i < fibers_.size();) {
    if (!fibers_[i]->announced()) {
      asked = true;
      if (!resume_at(i, Fiber::Wake::kAnnounce)) continue;
    }
    ++i;
  }
  if (asked) return;  // an announcement re-checks, and may have run on

  Clock::time_point deadline = Fiber::kNoDeadline;
  for (const Fiber* fiber : fibers_) deadline = std::min(deadline, fiber->deadline());
  const uint32_t bell = fiber_doorbell_value();
  // The last look, after reading the bell: anything that changes later rings it.
  if (interrupted() || any_ready()) return;
  sleep_on_fiber_doorbell(bell, deadline == Fiber::kNoDeadline
                                    ? std::chrono::nanoseconds(-1)
                                    : std::max<Clock::duration>(deadline - Clock::now(), 1us));
  idle_ = false;
}

}  // namespace meshsim
