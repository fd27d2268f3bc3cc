#pragma once
// FiberWorker: one worker thread of the fiber execution mode, running the
// device fibers posted to it until each ends.
//
// Its loop passes over its fibers and resumes every one that can go on (new,
// yielded, or parked with its condition met). When none can, it first keeps
// looking for a couple of microseconds (a fiber on another worker is usually
// about to release one of its own), then yields the core for a while, then
// has every parked fiber announce its wait (which is also what the deadlock
// detector sees) and sleeps on the fiber doorbell until one of those words
// changes, a task is posted, or the nearest deadline passes. A worker with no
// fibers at all sleeps on its own inbox word instead, so the rings meant for
// other workers (or other runtimes) leave it asleep.

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "meshsim/runtime/exec/internal/fiber/fiber.h"

namespace meshsim {

class FiberWorker {
 public:
  // Starts the thread. `index` names it in logs and debuggers.
  explicit FiberWorker(int index);
  // Stops once it has no fibers left, and joins.
  ~FiberWorker();
  FiberWorker(const FiberWorker&) = delete;
  FiberWorker& operator=(const FiberWorker&) = delete;

  // Hands the worker a chain of new fibers (linked by Fiber::next_posted);
  // it owns and deletes them. Any thread; allocates nothing.
  void post(Fiber* first) noexcept;

 private:
  void main();
  void take_posted();
  // Resumes fibers_[i]; if it ended, deletes it and moves the last fiber to i.
  // Returns whether fibers_[i] is still the fiber that was resumed.
  bool resume_at(size_t i, Fiber::Wake why, uint64_t scan);
  bool any_ready(uint64_t scan);

  std::mutex inbox_mu_;
  Fiber* inbox_first_ = nullptr;  // guarded by inbox_mu_
  Fiber* inbox_last_ = nullptr;   // guarded by inbox_mu_
  std::atomic<bool> has_posts_{false};
  std::atomic<bool> stop_{false};
  // Moved by post() and the destructor; the worker sleeps on it when it has
  // no fibers, announcing itself in inbox_sleeping_ first.
  std::atomic<uint32_t> inbox_bell_{0};
  std::atomic<bool> inbox_sleeping_{false};
  void ring_inbox();
  std::vector<Fiber*> fibers_;  // the worker thread's own
  std::thread thread_;
};

}  // namespace meshsim
