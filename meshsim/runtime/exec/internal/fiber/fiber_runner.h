#pragma once
// FiberRunner: the fibers one thread runs, and how that thread goes over them
// — a fiber worker's thread (fiber_worker.h), or a launching thread running
// its own block of the launch (run_to_end).
//
// Each pass resumes every fiber that can go on (new, yielded, or parked with
// its condition met). When none can, the thread first keeps looking for a
// couple of microseconds (a fiber on another thread is usually about to
// release one of these), then yields the core for a while (another thread
// may need it), then has every parked fiber announce its wait (which is also
// what the deadlock detector sees) and sleeps on the fiber doorbell until one
// of those words changes or the nearest deadline passes.
//
// Not thread-safe: one thread owns a runner, and deletes its fibers as they
// end.

#include <chrono>
#include <cstdint>
#include <vector>

#include "meshsim/runtime/exec/internal/fiber/fiber.h"
#include "meshsim/runtime/exec/internal/function_ref.h"

namespace meshsim {

class FiberRunner {
 public:
  using Clock = Fiber::Clock;

  FiberRunner() = default;
  // Every fiber must have ended: a runner is dropped only once it is empty.
  ~FiberRunner() = default;
  FiberRunner(const FiberRunner&) = delete;
  FiberRunner& operator=(const FiberRunner&) = delete;

  bool empty() const { return fibers_.empty(); }
  // Room for `n` fibers, so that as many add() calls allocate nothing.
  void reserve(size_t n) { fibers_.reserve(n); }
  // Takes ownership of `fiber`. Capacity grows only while the meshes do.
  void add(Fiber* fiber) { fibers_.push_back(fiber); }

  // One step: resumes every fiber that can go on; if none could, polls,
  // yields, or — past both phases — asks the parked fibers to announce
  // their waits and sleeps on the doorbell (not when the runner is empty:
  // the caller sleeps its own way). `interrupted` is read after the
  // doorbell and before sleeping: whatever makes it true must ring the
  // doorbell. Returns true when the caller should sleep itself (empty and
  // past the busy phases).
  bool step(FunctionRef<bool()> interrupted);
  // Steps until every fiber has ended: a launching thread running its own
  // block. Nothing but these fibers can ring for such a runner, so it never
  // sleeps its own way. Not from a fiber.
  void run_to_end() noexcept {
    while (!empty()) step([] { return false; });
  }

 private:
  // Resumes fibers_[i]; if it ended, deletes it and moves the last fiber to i.
  // Returns whether fibers_[i] is still the fiber that was resumed.
  bool resume_at(size_t i, Fiber::Wake why);
  bool any_ready();
  void sleep(FunctionRef<bool()> interrupted);

  std::vector<Fiber*> fibers_;
  uint64_t scan_ = 0;
  bool idle_ = false;
  Clock::time_point idle_since_;
};

}  // namespace meshsim
