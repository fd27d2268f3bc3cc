#include "meshsim/runtime/exec/internal/waiter.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/cpu_relax.h"
#include "meshsim/runtime/exec/internal/fiber/fiber.h"

namespace meshsim {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

WaitPolicy WaitPolicy::for_threads(int threads, int cores) {
  // Spinning pays off only while the peer that will change the word is running
  // on another core; with more threads than cores a spinning waiter steals the
  // very core that peer needs. Yielding is then the cheap first step.
  // The spin is short: a peer that is running answers within a microsecond or
  // two, and on a shared machine a peer may not be running at all (another
  // process holds its core), when every microsecond spun is lost.
  // The yield budget covers a few rounds of every thread on a core getting its
  // turn (a context switch is 2-3 us in a VM): a waiter that blocks too early
  // turns each meeting into futex wakes, which cost more than the switches.
  cores = std::max(cores, 1);
  if (threads <= cores) return {.spin_ns = 4'000, .yield_ns = 100'000};
  // Capped: past a couple of milliseconds a waiter had better block, so that a
  // device doing real work gets its core and deadlock detection stays quick.
  const int per_core = (threads + cores - 1) / cores;
  return {.spin_ns = 0,
          .yield_ns = std::clamp<int64_t>(int64_t{5'000} * per_core, 20'000, 2'000'000)};
}

WaitPolicy WaitPolicy::idle_after(int threads, int cores) {
  // With more device threads than cores, a crowd of yielding idle devices
  // would delay the launching thread; they block soon instead.
  if (threads <= cores) return {.spin_ns = 0, .yield_ns = 200'000};
  return {.spin_ns = 0, .yield_ns = 20'000};
}

void Waiter::throw_if_aborted(uint32_t value) {
  if (WaitWord::is_poisoned(value) ||
      (aborted_ != nullptr && aborted_->load(std::memory_order_seq_cst))) {
    settle_cancelled();
    throw CancelledError("cancelled: the launch failed (another device's error, a deadlock or a "
                         "timeout; the launch reports which)");
  }
}

void Waiter::settle_cancelled() {
  if (tracker_ != nullptr && !cancelled_) {
    cancelled_ = true;
    tracker_->on_cancelled();
  }
}

uint32_t Waiter::wait_slow(const WaitWord& word, FunctionRef<bool(uint32_t)> done) {
  if (Fiber* fiber = Fiber::current()) return wait_in_fiber(*fiber, word, done);
  const auto check = [&](uint32_t& value) {
    value = word.load();
    throw_if_aborted(value);
    return done(value);
  };
  uint32_t value;
  if (check(value)) return value;
  const auto check_value = [&] { return check(value); };
  if (policy_.spin_ns == 0) {
    // Without a spin phase (more threads than cores, or idle), one yield is
    // usually enough (the peers run meanwhile): try it before reading the
    // clock, which after a context switch costs a cache miss or two. A slow
    // yield is no sign of load here: it ran a peer.
    if (policy_.yield_ns > 0) {
      sched_yield();
      if (check(value)) return value;
      if (yield_phase(check_value, /*learn=*/false)) return value;
    }
    return block(word, done);
  }

  // A spin phase: threads <= cores, adapting to load (see waiter.h).
  const int64_t spin = next_spin_ns();
  if (spin > 0) {
    const auto spin_end = Clock::now() + std::chrono::nanoseconds(spin);
    do {  // read the clock once per 64 polls: it costs more than a poll
      for (int i = 0; i < 64; ++i) {
        cpu_relax();
        if (check(value)) {
          spin_budget_ns_ = policy_.spin_ns;
          return value;
        }
      }
    } while (Clock::now() < spin_end);
    // A failed probe (budget none) leaves none; a failed spin halves.
    spin_budget_ns_ = spin_budget_ns_ / 2 >= kMinSpinNs ? spin_budget_ns_ / 2 : 0;
  }
  if (waits_without_yield_ > 0) {
    --waits_without_yield_;
  } else if (yield_phase(check_value, /*learn=*/true)) {
    return value;
  }
  return block(word, done);
}

int64_t Waiter::next_spin_ns() {
  if (spin_budget_ns_ > 0) return spin_budget_ns_;
  if (++waits_without_spin_ < kProbeEvery) return 0;
  waits_without_spin_ = 0;
  return policy_.spin_ns;
}

bool Waiter::yield_phase(FunctionRef<bool()> check, bool learn) {
  auto before = Clock::now();
  for (const auto until = before + std::chrono::nanoseconds(policy_.yield_ns); before < until;) {
    sched_yield();
    if (check()) return true;
    const auto after = Clock::now();
    if (learn && after - before >= std::chrono::nanoseconds(kSlowYieldNs)) {
      waits_without_yield_ = kWaitsWithoutYield;
      return false;
    }
    before = after;
  }
  return false;
}

template <class Sleep>
void Waiter::announce_and_sleep(WaitWord& word, uint32_t value,
                                std::atomic<uint32_t> WaitWord::*sleepers, Sleep&& sleep) {
  // Announce: to the word (so advance() makes the system call, or rings the
  // fiber doorbell), then to the aborter and the deadlock detector. Then
  // re-check everything: a change or an abort that happened before the
  // announcement is seen here.
  (word.*sleepers).fetch_add(1, std::memory_order_seq_cst);
  blocked_value_.store(value, std::memory_order_seq_cst);
  block_episode_.fetch_add(1, std::memory_order_seq_cst);
  blocked_on_.store(&word, std::memory_order_seq_cst);
  struct Unannounce {
    Waiter* self;
    std::atomic<uint32_t>& sleepers;
    bool tracked = false;
    ~Unannounce() {
      if (tracked) self->tracker_->on_unblock();
      self->blocked_on_.store(nullptr, std::memory_order_seq_cst);
      sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }
  } unannounce{this, word.*sleepers};

  const uint32_t now = word.load(std::memory_order_seq_cst);
  throw_if_aborted(now);
  if (now != value) return;
  if (tracker_ != nullptr) {
    unannounce.tracked = true;
    tracker_->on_block();  // may detect a deadlock and poison this very word
  }
  sleep();
}

uint32_t Waiter::block(const WaitWord& word, FunctionRef<bool(uint32_t)> done) {
  auto& mutable_word = const_cast<WaitWord&>(word);
  for (;;) {
    const uint32_t value = word.load();
    throw_if_aborted(value);
    if (done(value)) return value;
    announce_and_sleep(mutable_word, value, &WaitWord::sleepers_,
                       [&] { futex_wait(word.value_, value); });
  }
}

uint32_t Waiter::wait_in_fiber(Fiber& fiber, const WaitWord& word,
                              FunctionRef<bool(uint32_t)> done) {
  for (;;) {
    const uint32_t value = word.load();
    throw_if_aborted(value);
    if (done(value)) return value;
    parked_on_.store(&word, std::memory_order_relaxed);
    const Fiber::Wake why = fiber.park(word, done, aborted_, /*announced=*/false);
    parked_on_.store(nullptr, std::memory_order_relaxed);
    if (why == Fiber::Wake::kAnnounce) park_announced(fiber, word, done);
  }
}

void Waiter::park_announced(Fiber& fiber, const WaitWord& word, FunctionRef<bool(uint32_t)> done) {
  const uint32_t value = word.load();
  throw_if_aborted(value);
  if (done(value)) return;
  // As block() does, but the fiber's worker sleeps (on the doorbell), not
  // this thread. Parked until the word moves at all (not just until `done`):
  // the deadlock detector compares the word with blocked_value(), so a stale
  // announcement must not outlive a change.
  const auto changed = [value](uint32_t v) { return v != value; };
  announce_and_sleep(const_cast<WaitWord&>(word), value, &WaitWord::fiber_sleepers_, [&] {
    fiber.park(word, FunctionRef<bool(uint32_t)>(changed), aborted_, /*announced=*/true);
  });
}

bool Waiter::wait_change_until_in_fiber(Fiber& fiber, const WaitWord& word, uint32_t seen,
                                        Clock::time_point deadline) {
  auto& mutable_word = const_cast<WaitWord&>(word);
  const auto changed = [seen](uint32_t v) { return v != seen; };
  const FunctionRef<bool(uint32_t)> done(changed);
  for (;;) {
    if (word.load() != seen) return true;
    if (Clock::now() >= deadline) return false;
    if (fiber.park(word, done, nullptr, /*announced=*/false, deadline) != Fiber::Wake::kAnnounce) {
      continue;
    }
    mutable_word.fiber_sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (word.load(std::memory_order_seq_cst) == seen) {
      fiber.park(word, done, nullptr, /*announced=*/true, deadline);
    }
    mutable_word.fiber_sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace meshsim

namespace meshsim {

bool Waiter::wait_change_until(const WaitWord& word, uint32_t seen, Clock::time_point deadline) {
  if (Fiber* fiber = Fiber::current()) {
    return wait_change_until_in_fiber(*fiber, word, seen, deadline);
  }
  auto& mutable_word = const_cast<WaitWord&>(word);
  for (;;) {
    if (word.load() != seen) return true;
    const auto now = Clock::now();
    if (now >= deadline) return false;
    mutable_word.sleepers_.fetch_add(1, std::memory_order_seq_cst);
    if (word.load(std::memory_order_seq_cst) == seen) {
      futex_wait_for(word.value_, seen, deadline - now);
    }
    mutable_word.sleepers_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace meshsim
