#pragma once
// Waiter: how a device (its thread, or its fiber) or a host thread waits for a
// WaitWord to reach a state it needs.
//
// Every wait first checks the word once inline (one acquire load). The slow
// path, out of line, then
//   1. spins for `spin_ns` — only worthwhile when the thread that will change
//      the word can be running, i.e. the launch has no more threads than cores;
//   2. calls sched_yield for `yield_ns`, which hands the core to a runnable
//      peer when threads outnumber cores (without a spin phase, the first
//      yield comes before the clock is read: one is usually enough);
//   3. blocks on the futex, announcing itself first (to the word, so wakers
//      know to make the system call; to the BlockTracker, which detects
//      deadlock; to the aborter, through blocked_on()).
// After every wake it re-reads the word; a wake proves nothing by itself.
//
// With a spin phase (threads <= cores) the waiter adapts to a machine that
// other processes load, where the peer it waits for is often not running:
//   - a spin that ends without the word changing halves the next spin
//     (below kMinSpinNs: none), one that sees it change restores spin_ns, and
//     every kProbeEvery-th wait without a spin tries the whole spin again
//     (a probe that fails leaves none);
//   - a sched_yield that returns after kSlowYieldNs gave the core to another
//     process for a time slice, not to a peer: the next kWaitsWithoutYield
//     waits block on the futex right after their spin instead, since a
//     thread woken from a futex preempts such a process at once, where a
//     yielding one waits out its slice (2 devices beside 2 busy processes:
//     a psum in 5.7 us blocking, 164 us yielding).
// What a waiter learned lasts from launch to launch (a device's waiter is
// its own) until its policy changes.
//
// On a device fiber (the fiber execution mode) there is no spinning, yielding
// or futex: the wait parks the fiber, and its worker resumes it when the
// condition holds (fiber/fiber.h). When the worker has nothing left to run it
// asks its parked fibers to announce their waits exactly as step 3 does
// (fiber sleepers on the word, blocked_on(), the BlockTracker) before it
// sleeps, so cancellation and deadlock detection work the same in both modes.
//
// Cancellation: a poisoned word (WaitWord::poison) throws CancelledError. The
// aborter poisons the word each blocked waiter announced; a waiter that
// announces itself after the aborter looked sees `aborted` set instead (both
// sides use seq_cst, so at least one of them sees the other).
//
// A Waiter belongs to one thread or fiber; others may read only blocked_on(),
// blocked_value(), block_episode() and waiting_on().

#include <atomic>
#include <chrono>
#include <cstdint>

#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/exec/wait_policy.h"
#include "meshsim/runtime/exec/internal/wait_word.h"

namespace meshsim {

class Fiber;

// Told when a waiter starts and stops blocking on the futex (the launch's
// deadlock detector).
class BlockTracker {
 public:
  virtual void on_block() = 0;
  virtual void on_unblock() = 0;
  // Called on a device's first cancelled wait of the launch, before the
  // CancelledError is thrown: returns once no device of the launch can still
  // touch this device's buffers (a leader writing its output, a peer copying
  // from it), so unwinding may free them.
  virtual void on_cancelled() = 0;

 protected:
  ~BlockTracker() = default;
};

class Waiter {
 public:
  static constexpr int64_t kMinSpinNs = 250;
  static constexpr uint32_t kProbeEvery = 16;
  static constexpr int64_t kSlowYieldNs = 20'000;
  static constexpr uint32_t kWaitsWithoutYield = 64;

  // A policy other than the current one also makes the waiter forget what it
  // learned of the machine (see above).
  void set_policy(WaitPolicy policy) {
    if (policy == policy_) return;
    policy_ = policy;
    spin_budget_ns_ = policy.spin_ns;
    waits_without_spin_ = 0;
    waits_without_yield_ = 0;
  }
  // What the waiter learned (for tests): the next spin's length (before a
  // probe), and how many more waits skip the yield phase.
  int64_t spin_budget_ns() const { return spin_budget_ns_; }
  uint32_t waits_without_yield() const { return waits_without_yield_; }
  // While attached, waits throw CancelledError once `aborted` is set, and
  // report blocking to `tracker` (may be null).
  void attach(const std::atomic<bool>* aborted, BlockTracker* tracker) {
    aborted_ = aborted;
    tracker_ = tracker;
    cancelled_ = false;
  }
  // Whether a wait of the current launch was cancelled (and so the tracker
  // was told).
  bool cancelled() const { return cancelled_; }
  // Records that the device already settled for this launch (the tracker's
  // on_cancelled ran, or the device failed and settled itself), so no later
  // wait reports it again.
  void mark_cancelled() { cancelled_ = true; }
  void detach() { attach(nullptr, nullptr); }
  // For calls that make progress without waiting (a poll, a yield): whether
  // the launch aborted. If so the device settles as a cancelled wait does
  // (the tracker is told once), and the caller must throw CancelledError: a
  // device that polls instead of blocking stops too once its launch failed
  // or timed out. True too for a device that settled already (a cancelled
  // wait, or its own failure): a launch settles devices only once aborted.
  bool cancel_if_aborted() {
    if (aborted_ == nullptr || !aborted_->load(std::memory_order_seq_cst)) return false;
    settle_cancelled();
    return true;
  }

  // Returns the first value of `word` for which done(value) holds.
  template <class Done>
  uint32_t wait(const WaitWord& word, Done&& done) {
    const uint32_t value = word.load();
    if (!WaitWord::is_poisoned(value) && done(value)) return value;
    return wait_slow(word, FunctionRef<bool(uint32_t)>(done));
  }
  // Waits until `word` differs from `seen`.
  uint32_t wait_change(const WaitWord& word, uint32_t seen) {
    return wait(word, [seen](uint32_t v) { return v != seen; });
  }

  // Waits until `word` differs from `seen` or `deadline` passes; returns
  // whether it changed. No spinning, no cancellation, no deadlock tracking:
  // for the launching thread, and for waits whose caller checks for itself
  // whether to give up (a device's claim of another launch's device).
  bool wait_change_until(const WaitWord& word, uint32_t seen,
                         std::chrono::steady_clock::time_point deadline);

  // The word this waiter is blocked on (null when not blocked), and the value it
  // saw before blocking and its block episode: the deadlock detector's snapshot.
  const WaitWord* blocked_on() const { return blocked_on_.load(std::memory_order_seq_cst); }
  uint32_t blocked_value() const { return blocked_value_.load(std::memory_order_seq_cst); }
  uint64_t block_episode() const { return block_episode_.load(std::memory_order_seq_cst); }
  // The word this waiter waits on in any way — blocked, or (a fiber) parked
  // without having announced itself yet: for progress reports only.
  const WaitWord* waiting_on() const {
    const WaitWord* word = blocked_on();
    return word != nullptr ? word : parked_on_.load(std::memory_order_relaxed);
  }

 private:
  uint32_t wait_slow(const WaitWord& word, FunctionRef<bool(uint32_t)> done);
  uint32_t block(const WaitWord& word, FunctionRef<bool(uint32_t)> done);
  // Announces a sleep until `word` moves from `value` (counted in the word's
  // `sleepers`, for the aborter and the deadlock detector), re-checks, runs
  // sleep() unless the word moved meanwhile, and withdraws the announcement.
  // Throws CancelledError if the launch aborted.
  template <class Sleep>
  void announce_and_sleep(WaitWord& word, uint32_t value, std::atomic<uint32_t> WaitWord::*sleepers,
                          Sleep&& sleep);
  uint32_t wait_in_fiber(Fiber& fiber, const WaitWord& word, FunctionRef<bool(uint32_t)> done);
  // Announces the wait as block() does, parks until the word changes, and
  // withdraws the announcement.
  void park_announced(Fiber& fiber, const WaitWord& word, FunctionRef<bool(uint32_t)> done);
  bool wait_change_until_in_fiber(Fiber& fiber, const WaitWord& word, uint32_t seen,
                                  std::chrono::steady_clock::time_point deadline);
  void throw_if_aborted(uint32_t value);
  // The spin of this wait: the learned budget, or the whole spin_ns as a
  // probe every kProbeEvery-th wait once the budget fell to none.
  int64_t next_spin_ns();
  // Calls sched_yield for yield_ns, or until check() holds (returns true).
  // With `learn`, a slow yield (load) ends the phase, and the next
  // kWaitsWithoutYield waits skip it.
  bool yield_phase(FunctionRef<bool()> check, bool learn);
  // Tells the tracker of the launch's first cancellation of this waiter.
  void settle_cancelled();

  WaitPolicy policy_;
  int64_t spin_budget_ns_ = 0;
  uint32_t waits_without_spin_ = 0;
  uint32_t waits_without_yield_ = 0;
  const std::atomic<bool>* aborted_ = nullptr;
  BlockTracker* tracker_ = nullptr;
  bool cancelled_ = false;
  std::atomic<const WaitWord*> blocked_on_{nullptr};
  std::atomic<uint32_t> blocked_value_{0};
  std::atomic<uint64_t> block_episode_{0};
  std::atomic<const WaitWord*> parked_on_{nullptr};
};

}  // namespace meshsim
