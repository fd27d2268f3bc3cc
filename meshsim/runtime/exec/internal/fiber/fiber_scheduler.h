#pragma once
// FiberScheduler: the fiber execution mode of one Runtime — its worker
// threads and its fiber stacks.
//
// A launch runs each of its devices as a fiber (fiber.h) made for that launch:
// worker w runs the w-th contiguous block of the launch's mesh positions, so
// every launch spreads over the workers whatever its device ids, the groups of
// a minor axis meet within one worker, and a device between launches holds no
// stack at all. Fibers never migrate.
//
// A launching thread that would only wait may run block 0 itself instead of
// worker 0 (FiberRunner::run_to_end): the launch then has as many threads as the machine
// has cores, where a third thread on two cores made every launch wait for
// the scheduler to switch a worker in (~4 us of a 14 us empty launch).

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "meshsim/runtime/exec/internal/cpu_binding.h"
#include "meshsim/runtime/exec/internal/fiber/fiber.h"
#include "meshsim/runtime/exec/internal/fiber/fiber_runner.h"
#include "meshsim/runtime/exec/internal/fiber/fiber_worker.h"
#include "meshsim/runtime/exec/internal/fiber/stack_pool.h"

namespace meshsim {

class FiberScheduler {
 public:
  // Starts `workers` worker threads, worker w placed as `binding`'s w-th
  // thread (`binding` must outlive the scheduler); every fiber gets a stack
  // of `stack_bytes`.
  FiberScheduler(int workers, size_t stack_bytes, const CpuBinding& binding);
  // Joins the workers; no launch may be running.
  ~FiberScheduler();
  FiberScheduler(const FiberScheduler&) = delete;
  FiberScheduler& operator=(const FiberScheduler&) = delete;

  int workers() const { return static_cast<int>(workers_.size()); }
  size_t stack_bytes() const { return stacks_.stack_bytes(); }
  FiberStackStats stack_stats() const { return stacks_.stats(); }

  // One fiber per device of `launch`, by mesh position, ready to post: made
  // before the launch claims its devices, since it can fail (ResourceError).
  std::vector<std::unique_ptr<Fiber>> prepare(Launch& launch);
  // The positions [begin, end) of a launch of `n` devices that worker `w`
  // runs: the w-th of workers() contiguous, near-equal blocks.
  std::pair<size_t, size_t> block(size_t n, size_t w) const {
    return {w * n / workers_.size(), (w + 1) * n / workers_.size()};
  }
  // Hands the fibers to the workers (contiguous blocks of positions). With
  // `here`, block 0 goes there instead of to worker 0 (it must have room for
  // them: FiberRunner::reserve), and the caller runs it (run_to_end).
  void post(std::vector<std::unique_ptr<Fiber>>& fibers, FiberRunner* here = nullptr) noexcept;

 private:
  StackPool stacks_;
  std::vector<std::unique_ptr<FiberWorker>> workers_;
};

}  // namespace meshsim
