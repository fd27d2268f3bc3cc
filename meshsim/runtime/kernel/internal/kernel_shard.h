#pragma once
// A kernel's state: each device's KernelShard (its symmetric buffers and
// semaphores) and the KernelGroup that lets every device of the kernel find
// its peers' shards. Internal to runtime/.
//
// Lifetime: a device allocates its shard at kernel entry and frees it when
// it leaves, which is only once no peer can touch it any more (after the
// exit meeting, or once every device of a failed launch settled); position
// 0 owns the group the same way.

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/kernel/kernel_spec.h"

namespace meshsim {

// A semaphore: `signalled` counts every increment (any device adds to it);
// `consumed` what its owner took by waiting (only the owner writes it). The
// value is the difference (WaitNote::held).
struct alignas(64) SemaphoreCell {
  WaitWord signalled;
  std::atomic<uint32_t> consumed{0};

  uint32_t value() const;
};

struct KernelShard {
  // Zero-filled buffers and semaphores at 0, as `spec` declares them. The
  // shape errors of Array::zeros for a buffer too large.
  explicit KernelShard(const KernelSpec& spec);

  std::vector<Array> buffers;
  std::vector<std::byte*> data;  // each buffer's bytes (never shared: no copy-on-write)
  int regular = 0;  // cells [0, regular) are the regular semaphores,
  int dma = 0;      // then the DMA ones, then the barrier semaphore
  std::unique_ptr<SemaphoreCell[]> cells;

  SemaphoreCell& regular_cell(int index) { return cells[index]; }
  SemaphoreCell& dma_cell(int index) { return cells[regular + index]; }
  SemaphoreCell& barrier_cell() { return cells[regular + dma]; }
};

struct KernelGroup {
  explicit KernelGroup(int devices) : shards(devices) {}
  std::vector<KernelShard*> shards;  // by mesh position, filled at entry
};

}  // namespace meshsim
