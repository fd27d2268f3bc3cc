#pragma once
// WaitNote: the count a device waits for on a counting word (a kernel's
// semaphore: the word counts signals, the device has taken `consumed` of
// them), so deadlock and timeout reports can say "for DMA semaphore 1 to
// reach 4096 (it holds 0)". Written by the device before it waits;
// read racily by reporters, which trust the value only while the device is
// blocked on `word` (Waiter::blocked_value, or `holds`). Internal to runtime/.

#include <atomic>
#include <cstdint>

#include "meshsim/runtime/exec/internal/wait_word.h"

namespace meshsim {

struct WaitNote {
  std::atomic<const WaitWord*> word{nullptr};  // null: no counting wait
  std::atomic<const char*> kind{nullptr};      // "semaphore", "DMA semaphore", ...
  std::atomic<int> index{0};
  std::atomic<int64_t> target{0};
  std::atomic<uint32_t> consumed{0};  // in WaitWord steps
  // >= 0: what the semaphore holds, for a wait that sleeps on another word
  // than the semaphore's (`word` is then that one), which nobody changes
  // without waking the device.
  std::atomic<int64_t> holds{-1};

  // The value a counting word holds for its owner: signals minus takes,
  // modulo the 31 bits a WaitWord counts in.
  static uint32_t held(uint32_t word_value, uint32_t consumed) {
    return ((word_value >> 1) - consumed) & 0x7fff'ffff;
  }
};

}  // namespace meshsim
