#include "meshsim/runtime/exec/internal/fiber/fiber_scheduler.h"

#include "meshsim/runtime/exec/internal/launch.h"

namespace meshsim {

FiberScheduler::FiberScheduler(int workers, size_t stack_bytes, const CpuBinding& binding)
    : stacks_(stack_bytes) {
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.push_back(std::make_unique<FiberWorker>(i, binding));
}

FiberScheduler::~FiberScheduler() = default;

std::vector<std::unique_ptr<Fiber>> FiberScheduler::prepare(Launch& launch) {
  const auto& devices = launch.devices();
  std::vector<std::unique_ptr<Fiber>> fibers;
  fibers.reserve(devices.size());
  for (size_t position = 0; position < devices.size(); ++position) {
    fibers.push_back(
        std::make_unique<Fiber>(stacks_, launch, *devices[position], static_cast<int>(position)));
  }
  return fibers;
}

void FiberScheduler::post(std::vector<std::unique_ptr<Fiber>>& fibers, FiberRunner* here) noexcept {
  // Worker w gets the w-th contiguous block of positions: the groups of a
  // minor axis (consecutive positions) then meet within one worker, with no
  // cache line crossing cores. Each block is posted as one chain.
  for (size_t w = 0; w < workers_.size(); ++w) {
    const auto [begin, end] = block(fibers.size(), w);
    if (begin == end) continue;
    if (w == 0 && here != nullptr) {
      for (size_t position = begin; position < end; ++position) here->add(fibers[position].get());
      continue;
    }
    for (size_t position = begin; position + 1 < end; ++position) {
      fibers[position]->next_posted = fibers[position + 1].get();
    }
    workers_[w]->post(fibers[begin].get());
  }
  for (auto& fiber : fibers) fiber.release();  // the workers (and `here`) own them now
  fibers.clear();
}

}  // namespace meshsim
