#include "meshsim/runtime/exec/internal/fiber/fiber_scheduler.h"

#include "meshsim/runtime/exec/internal/launch.h"

namespace meshsim {

FiberScheduler::FiberScheduler(int workers, size_t stack_bytes) : stacks_(stack_bytes) {
  workers_.reserve(static_cast<size_t>(workers));
  for (int i = 0; i < workers; ++i) workers_.push_back(std::make_unique<FiberWorker>(i));
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

void FiberScheduler::post(std::vector<std::unique_ptr<Fiber>>& fibers) noexcept {
  // Chain each worker's share (in position order), then post each chain once.
  const size_t n = workers_.size();
  for (size_t w = 0; w < n && w < fibers.size(); ++w) {
    Fiber* first = nullptr;
    Fiber** tail = &first;
    for (size_t position = w; position < fibers.size(); position += n) {
      *tail = fibers[position].release();
      tail = &(*tail)->next_posted;
    }
    workers_[w]->post(first);
  }
  fibers.clear();
}

}  // namespace meshsim
