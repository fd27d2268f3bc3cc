#pragma once
// FiberWorker: one worker thread of the fiber execution mode, running the
// device fibers posted to it until each ends (fiber_runner.h says how). A
// worker with no fibers at all, past the runner's busy phases, sleeps on its
// own inbox word instead of the doorbell, so the rings meant for other
// workers (or other runtimes) leave it asleep.

#include <atomic>
#include <mutex>
#include <thread>

#include "meshsim/runtime/exec/internal/cpu_binding.h"
#include "meshsim/runtime/exec/internal/fiber/fiber.h"
#include "meshsim/runtime/exec/internal/fiber/fiber_runner.h"

namespace meshsim {

class FiberWorker {
 public:
  // Starts the thread, placed as `binding`'s index-th thread (which must
  // outlive the worker). `index` names it in logs and debuggers too.
  FiberWorker(int index, const CpuBinding& binding);
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
  void sleep_on_inbox();

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
  FiberRunner fibers_;  // the worker thread's own
  std::thread thread_;
};

}  // namespace meshsim
