#pragma once
// Fiber: one device's part of one launch, run as a stackful fiber on a worker
// thread, or on the launching thread for block 0 of its launch (the fiber
// execution mode; a FiberRunner on either thread runs them).
//
// A switch is Boost.Context's fcontext jump, which saves a few registers: tens
// of nanoseconds, against microseconds for an OS context switch. Every switch
// is announced to AddressSanitizer and ThreadSanitizer (their fiber APIs), and
// swaps the C++ runtime's per-thread exception state, so a fiber that parks
// inside a catch block does not see another fiber's exceptions.
//
// A fiber parks instead of sleeping: it leaves its thread (a "worker" below)
// the word it waits for and its condition, and the worker evaluates the
// condition itself, resuming the fiber only when it holds (or the launch
// aborted, a deadline passed, or the worker wants every fiber to announce its
// wait before the worker sleeps: see Waiter). A fiber never moves to another
// thread, so thread-local state read before a switch is still right after it.

#include <boost/context/detail/fcontext.hpp>
#include <boost/context/stack_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/exec/internal/wait_word.h"

namespace meshsim {

class Launch;
class StackPool;
struct DeviceState;

class Fiber {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

  // Why a parked fiber was resumed.
  enum class Wake {
    kReady,     // its condition holds, its word was poisoned, or its launch aborted
    kDeadline,  // its deadline passed
    kAnnounce,  // its worker is about to sleep: announce the wait, then park announced
    kStay,      // wake_reason(): not to be resumed now
  };

  // Device `position` of `launch`, on a stack taken from `stacks`
  // (ResourceError if none can be mapped). Runs nothing until resumed.
  Fiber(StackPool& stacks, Launch& launch, DeviceState& device, int position);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // --- The running fiber's side ---

  // The fiber running on the calling thread; null on a plain thread.
  static Fiber* current();
  // Switches to the worker until `done(word)` holds, `word` is poisoned,
  // `*aborted` (if given) is set or `deadline` passes; and, unless
  // `announced`, whenever the worker asks for an announcement. `done` is
  // evaluated on the worker and must stay valid while parked.
  Wake park(const WaitWord& word, const FunctionRef<bool(uint32_t)>& done,
            const std::atomic<bool>* aborted, bool announced,
            Clock::time_point deadline = kNoDeadline);
  // Lets the worker run its other fibers once, then continues.
  void yield();

  // --- The worker's side ---

  // Whether to resume the fiber now, and why (kStay: not now). `scan` counts
  // the worker's passes over its fibers; `now` is read only if needed (then
  // cached). A plain enum, not an optional: GCC built the optional in memory
  // and read it back whole, a stalled store forward on every fiber of every
  // pass (a tenth of a 64-device psum loop).
  Wake wake_reason(uint64_t scan, std::optional<Clock::time_point>& now) const;
  // Parked with its wait announced: the worker may sleep with it parked.
  bool announced() const { return state_ == State::kParked && announced_; }
  // When the worker must look again even if nothing rings (kNoDeadline: never).
  Clock::time_point deadline() const {
    return state_ == State::kParked ? deadline_ : kNoDeadline;
  }
  // Runs the fiber until it parks or ends; returns true when it ended (the
  // worker then deletes it). `scan`: the worker's current pass.
  bool resume(Wake why, uint64_t scan);

  Fiber* next_posted = nullptr;  // the worker's inbox (FiberWorker::post)

 private:
  enum class State { kNew, kRunning, kParked, kYielded, kEnded };
  // After how many of its worker's passes a parked fiber that is still not
  // ready is asked to announce its wait even though the worker is busy, so a
  // deadlock among some fibers is found while others keep their worker busy.
  static constexpr uint64_t kAnnounceAfterScans = 4096;

  static void entry(boost::context::detail::transfer_t from);
  void switch_to_worker(bool final);
  void entered();

  Launch& launch_;
  DeviceState& device_;
  const int position_;
  StackPool& stacks_;
  boost::context::stack_context stack_;
  boost::context::detail::fcontext_t fiber_context_ = nullptr;
  boost::context::detail::fcontext_t worker_context_ = nullptr;

  State state_ = State::kNew;
  Wake wake_ = Wake::kReady;
  // The parked wait (valid in State::kParked).
  const WaitWord* word_ = nullptr;
  const FunctionRef<bool(uint32_t)>* done_ = nullptr;
  const std::atomic<bool>* aborted_ = nullptr;
  bool announced_ = false;
  Clock::time_point deadline_ = kNoDeadline;
  uint64_t parked_at_scan_ = 0;
  uint64_t scan_ = 0;  // the worker's pass when it last resumed this fiber

  // The C++ runtime's exception state of this fiber while it is switched out.
  struct ExceptionState {
    void* caught = nullptr;
    unsigned int uncaught = 0;
  } exceptions_;

  // Sanitizer bookkeeping (unused in plain builds).
  void* fake_stack_ = nullptr;         // ASan: this fiber's, while switched out
  void* worker_fake_stack_ = nullptr;  // ASan: the worker's, while this fiber runs
  const void* worker_stack_bottom_ = nullptr;
  size_t worker_stack_size_ = 0;
  void* tsan_fiber_ = nullptr;
  void* tsan_worker_ = nullptr;
};

}  // namespace meshsim
