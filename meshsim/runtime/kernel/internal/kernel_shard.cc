#include "meshsim/runtime/kernel/internal/kernel_shard.h"

#include <algorithm>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/internal/wait_note.h"

namespace meshsim {

uint32_t SemaphoreCell::value() const {
  // `consumed` first: the owner stores it (release) after reading the
  // signals it took, so the signals read next are at least those, and the
  // difference never goes below zero (which would read as ~2^31).
  const uint32_t taken = consumed.load(std::memory_order_acquire);
  return WaitNote::held(signalled.load(), taken);
}

SemaphoreCell* KernelWords::take(size_t n) {
  if (n > capacity_) {
    if (cells_) retired_.push_back(std::move(cells_));
    capacity_ = std::max(n, 2 * capacity_);
    cells_.reset(new SemaphoreCell[capacity_]);
  }
  for (size_t i = 0; i < n; ++i) {
    cells_[i].signalled.reset();
    cells_[i].consumed.store(0, std::memory_order_relaxed);
  }
  inbox_posted_.reset();
  return cells_.get();
}

std::string KernelShard::cell_name(int index) const {
  if (index < regular) return "semaphore " + std::to_string(index);
  if (index < regular + dma) return "DMA semaphore " + std::to_string(index - regular);
  return "the barrier semaphore";
}

KernelAgent::KernelAgent(const KernelSpec& spec, int positions, int position) {
  // Each device its own stream of the seed's draws.
  std::seed_seq seed{static_cast<uint32_t>(spec.copy_seed()),
                     static_cast<uint32_t>(spec.copy_seed() >> 32), static_cast<uint32_t>(position)};
  rng.seed(seed);
  if (spec.race_detection()) {
    clocks = std::make_unique<ActorClocks>(RaceDetector::actors(positions));
  }
}

KernelShard::KernelShard(const KernelSpec& spec, KernelWords& words)
    : regular(spec.semaphores()),
      dma(spec.dma_semaphores()),
      cells(words.take(static_cast<size_t>(spec.semaphores() + spec.dma_semaphores() + 1))),
      inbox_posted(words.inbox_posted()) {
  if (spec.race_detection()) {
    races = std::make_unique<ShardRaces>(static_cast<int>(spec.buffers().size()), regular + dma + 1);
  }
  buffers.reserve(spec.buffers().size());
  data.reserve(spec.buffers().size());
  for (const KernelSpec::BufferDecl& decl : spec.buffers()) {
    try {
      buffers.push_back(Array::zeros(decl.shape, decl.dtype));
    } catch (Error& e) {
      e.add_context("kernel '" + spec.name() + "' buffer " + std::to_string(buffers.size()));
      throw;
    }
    data.push_back(buffers.back().mutable_bytes());
  }
}

}  // namespace meshsim
