#include "meshsim/runtime/exec/internal/fiber/fiber_worker.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <string>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/cpu_relax.h"
#include "meshsim/runtime/exec/internal/fiber/doorbell.h"
#include "meshsim/runtime/exec/internal/futex.h"

namespace meshsim {
namespace {

using Clock = Fiber::Clock;
using namespace std::chrono_literals;

// While nothing can run: poll this long (a peer on another worker is often
// just about to release a fiber here), then yield the core this long (the
// launching thread or another runtime may need it), then sleep.
constexpr auto kPoll = 3us;
constexpr auto kYield = 50us;

}  // namespace

FiberWorker::FiberWorker(int index) {
  try {
    thread_ = std::thread([this] { main(); });
  } catch (const std::system_error& e) {
    throw ResourceError("cannot start fiber worker thread " + std::to_string(index) + ": " +
                        e.what() + " (RuntimeOptions::fiber_workers)");
  }
  const std::string name = "meshsim-fw" + std::to_string(index);
  pthread_setname_np(thread_.native_handle(), name.substr(0, 15).c_str());
}

FiberWorker::~FiberWorker() {
  stop_.store(true, std::memory_order_seq_cst);
  ring_inbox();
  thread_.join();
}

void FiberWorker::ring_inbox() {
  inbox_bell_.fetch_add(1, std::memory_order_seq_cst);
  if (inbox_sleeping_.load(std::memory_order_seq_cst)) futex_wake_all(inbox_bell_);
  ring_fiber_doorbell();  // it may be asleep on the doorbell, with fibers parked
}

void FiberWorker::post(Fiber* first) noexcept {
  if (first == nullptr) return;
  Fiber* last = first;
  while (last->next_posted != nullptr) last = last->next_posted;
  {
    std::lock_guard lock(inbox_mu_);
    (inbox_last_ != nullptr ? inbox_last_->next_posted : inbox_first_) = first;
    inbox_last_ = last;
    has_posts_.store(true, std::memory_order_seq_cst);
  }
  ring_inbox();
}

void FiberWorker::take_posted() {
  Fiber* fiber;
  {
    std::lock_guard lock(inbox_mu_);
    fiber = inbox_first_;
    inbox_first_ = inbox_last_ = nullptr;
    has_posts_.store(false, std::memory_order_relaxed);
  }
  while (fiber != nullptr) {
    Fiber* next = fiber->next_posted;
    fiber->next_posted = nullptr;
    fibers_.push_back(fiber);  // capacity grows only while the mesh does
    fiber = next;
  }
}

bool FiberWorker::resume_at(size_t i, Fiber::Wake why, uint64_t scan) {
  Fiber* fiber = fibers_[i];
  if (!fiber->resume(why, scan)) return true;
  delete fiber;
  fibers_[i] = fibers_.back();
  fibers_.pop_back();
  return false;
}

bool FiberWorker::any_ready(uint64_t scan) {
  std::optional<Clock::time_point> now;
  return std::any_of(fibers_.begin(), fibers_.end(),
                     [&](const Fiber* f) { return f->wake_reason(scan, now).has_value(); });
}

void FiberWorker::main() {
  uint64_t scan = 0;
  bool idle = false;
  Clock::time_point idle_since;
  for (;;) {
    if (has_posts_.load(std::memory_order_acquire)) take_posted();
    if (fibers_.empty() && stop_.load(std::memory_order_acquire)) return;

    ++scan;
    bool resumed = false;
    std::optional<Clock::time_point> now;
    for (size_t i = 0; i < fibers_.size();) {
      if (const auto why = fibers_[i]->wake_reason(scan, now)) {
        resumed = true;
        if (!resume_at(i, *why, scan)) continue;
      }
      ++i;
    }
    if (resumed) {
      idle = false;
      continue;
    }

    // Nothing could run.
    const auto at = Clock::now();
    if (!idle) {
      idle = true;
      idle_since = at;
    }
    if (at - idle_since < kPoll) {
      cpu_relax();
      continue;
    }
    if (at - idle_since < kPoll + kYield) {
      sched_yield();
      continue;
    }
    // Before sleeping, every parked fiber announces its wait: from then on a
    // change to its word rings the doorbell.
    bool asked = false;
    for (size_t i = 0; i < fibers_.size();) {
      if (!fibers_[i]->announced()) {
        asked = true;
        if (!resume_at(i, Fiber::Wake::kAnnounce, scan)) continue;
      }
      ++i;
    }
    if (asked) continue;  // an announcement re-checks, and may have run on

    if (fibers_.empty()) {
      // Announce, re-check, sleep: the Dekker pair with ring_inbox().
      const uint32_t bell = inbox_bell_.load(std::memory_order_seq_cst);
      inbox_sleeping_.store(true, std::memory_order_seq_cst);
      if (!has_posts_.load(std::memory_order_seq_cst) && !stop_.load(std::memory_order_seq_cst)) {
        futex_wait(inbox_bell_, bell);
      }
      inbox_sleeping_.store(false, std::memory_order_relaxed);
      idle = false;
      continue;
    }

    Clock::time_point deadline = Fiber::kNoDeadline;
    for (const Fiber* fiber : fibers_) deadline = std::min(deadline, fiber->deadline());
    const uint32_t bell = fiber_doorbell_value();
    // The last look, after reading the bell: anything that changes later rings it.
    if (has_posts_.load(std::memory_order_seq_cst) || stop_.load(std::memory_order_seq_cst) ||
        any_ready(scan)) {
      continue;
    }
    sleep_on_fiber_doorbell(bell, deadline == Fiber::kNoDeadline
                                      ? std::chrono::nanoseconds(-1)
                                      : std::max<Clock::duration>(deadline - Clock::now(), 1us));
    idle = false;
  }
}

}  // namespace meshsim
