#pragma once
// A kernel's state: each device's KernelShard (its symmetric buffers and
// semaphores) and the KernelGroup that lets every device of the kernel find
// its peers' shards. Internal to runtime/.
//
// Lifetime: a device allocates its shard at kernel entry and frees it when
// it leaves, which is only once no peer can touch it any more (after the
// exit meeting, or once every device of a failed launch settled). Every
// device holds the group (shared_ptr): copies still in flight to a device
// land after the exit meeting, through it.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/kernel/internal/race_detector.h"
#include "meshsim/runtime/kernel/kernel_spec.h"

namespace meshsim {

// A semaphore: `signalled` counts every increment (any device adds to it);
// `consumed` what its device took by waiting (by compare-and-swap: the
// functions an mpmd_map runs on one device may wait on one semaphore). The
// value is the difference (WaitNote::held).
struct alignas(64) SemaphoreCell {
  WaitWord signalled;
  std::atomic<uint32_t> consumed{0};

  uint32_t value() const;
};

// Where a signal came from, kept when the launch keeps virtual time or
// traces: the device (and core) that sent it, its clock reading then, the bytes the
// network carries for it (a copy's size; 0 for a semaphore signal or a
// send's completion) and its trace flow (0: none).
struct SignalStamp {
  int source = 0;  // agent id (DeviceState::agent): what virtual time keys on
  int device = 0;  // device id: the same for the functions of one device
  double departure = 0;
  int64_t bytes = 0;
  uint64_t flow = 0;
};

// The stamps of the signals pending on a device's semaphores, by cell,
// oldest first: a wait takes the oldest with its units, and its clock and
// trace event learn where they came from. Any signaller adds, under `mu`.
struct ShardStamps {
  explicit ShardStamps(int cells) : pending(static_cast<size_t>(cells)) {}
  struct Pending {
    uint32_t units;
    SignalStamp stamp;
    // Bit c: core c of the device already took part of it (and priced it);
    // each function on the device prices a signal it takes from once.
    uint8_t priced_by;
  };
  std::mutex mu;
  std::vector<std::deque<Pending>> pending;
};

// A DMA in flight (CopyMode::kOnWait, kRandom), in the two phases of a
// hardware DMA: its source is read (into `staging`; then the send semaphore
// is signalled), later its destination written (then the receive
// semaphore). Each phase runs once, by whichever device needs it first — the
// issuer waiting for the send, the receiver waiting for the receive — under
// `mu`; writing first reads.
struct InFlightCopy {
  std::mutex mu;
  bool read = false;
  bool written = false;
  std::vector<std::byte> staging;
  const std::byte* from = nullptr;
  std::byte* to = nullptr;
  size_t bytes = 0;
  int issuer = 0;  // launch positions
  int target = 0;
  int send_cell = 0;
  bool signals_send = true;  // false for a local copy: it signals one semaphore
  int recv_cell = 0;
  // What its send and its receive signals carry (race detection only).
  VectorClock send_clock;
  VectorClock recv_clock;
  // Its departure (virtual time, traces), taken at start.
  SignalStamp stamp;
};

// The words a device's kernels at one nesting depth wait on: its
// semaphores and the word a receiver of copies sleeps on. Kept for the
// runtime's life (KernelContext owns it), because the deadlock detector may
// still read a word a device was blocked on after that device's kernel
// ended. Only the device's own thread calls take(), at kernel entry.
class KernelWords {
 public:
  // `n` semaphores at 0 and the inbox word, reset: no thread can wait on
  // them now (the kernel that used them before has ended).
  SemaphoreCell* take(size_t n);
  WaitWord& inbox_posted() { return inbox_posted_; }

 private:
  std::unique_ptr<SemaphoreCell[]> cells_;
  size_t capacity_ = 0;
  // Arrays outgrown by a larger kernel: never freed, for the same reason.
  std::vector<std::unique_ptr<SemaphoreCell[]>> retired_;
  WaitWord inbox_posted_;
};

// A device's memory in a kernel: shared by every function an mpmd_map runs
// on the device (KernelPrograms::owner_of).
struct KernelShard {
  // Zero-filled buffers and semaphores at 0 (from `words`), as `spec`
  // declares them. The shape errors of Array::zeros for a buffer too large.
  KernelShard(const KernelSpec& spec, KernelWords& words);

  std::vector<Array> buffers;
  std::vector<std::byte*> data;  // each buffer's bytes (never shared: no copy-on-write)
  int regular = 0;  // cells [0, regular) are the regular semaphores,
  int dma = 0;      // then the DMA ones, then the barrier semaphore
  SemaphoreCell* cells;  // in a KernelWords

  int regular_cell(int index) const { return index; }
  int dma_cell(int index) const { return regular + index; }
  int barrier_cell() const { return regular + dma; }
  // "semaphore 2", "DMA semaphore 0", "the barrier semaphore": cell
  // `index`, for messages.
  std::string cell_name(int index) const;

  // Copies to this device not yet written: any issuer adds, then advances
  // `inbox_posted`, on which a receiver waiting for a copy sleeps.
  std::mutex inbox_mu;
  std::vector<std::shared_ptr<InFlightCopy>> inbox;
  WaitWord& inbox_posted;  // in a KernelWords
  // Race detection's part of this device (null when off).
  std::unique_ptr<ShardRaces> races;
  // Null unless the launch keeps virtual time or traces.
  std::unique_ptr<ShardStamps> stamps;
  // Held, when several functions share the device, from a wait's taking of
  // units (consumed) to its taking of their stamps and race clocks, so
  // those go to the waits in the order the units did.
  std::mutex take_mu;
};

// What one function on a device keeps for itself in a kernel (its own
// thread only): the copies it started and has not seen both phases of, the
// generator of CopyMode::kRandom's choices, and its race clocks.
struct KernelAgent {
  // For launch position `position` of `positions`.
  KernelAgent(const KernelSpec& spec, int positions, int position);

  std::vector<std::shared_ptr<InFlightCopy>> started;
  std::mt19937_64 rng;
  std::unique_ptr<ActorClocks> clocks;  // null unless race detection is on
};

struct KernelGroup {
  explicit KernelGroup(int devices) : shards(devices) {}
  // By launch position, filled at entry: functions that share a device
  // share its shard.
  std::vector<KernelShard*> shards;
  std::unique_ptr<RaceDetector> races;  // null when off
};

}  // namespace meshsim
