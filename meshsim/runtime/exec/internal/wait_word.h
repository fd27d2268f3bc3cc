#pragma once
// WaitWord: the one kind of word meshsim ever waits on (a thread blocks, a
// fiber parks).
//
// Contract
// - The value only moves forward, in steps of 2 (`advance`). Bit 0 is the
//   poison bit: `poison()` sets it when a launch is aborted, which changes the
//   very word every blocked waiter sleeps on, so no wake-up can be lost and no
//   timed wait is needed. A poisoned word stays poisoned until `clear_poison()`,
//   which the runtime calls only once no thread can wait on it any more.
// - Waiters (see Waiter) announce themselves before blocking, so `advance()`
//   makes a system call only when somebody sleeps: a thread in `sleepers_`
//   (it sleeps on this word's futex), a device fiber in `fiber_sleepers_`
//   (its worker thread sleeps on the fiber doorbell, fiber/doorbell.h).
// - The rest of the word's cache line is a payload area for a word with one
//   writer: bytes it writes there before advance() travel to a waiter in the
//   very line that tells it they are ready (Exchange, comm/internal/).
// Memory order: advance() is a seq_cst read-modify-write that also releases
// everything the caller wrote before it; a waiter that observes the new value
// with an acquire load sees those writes. The sleepers_ handshake is the
// classic store/load (Dekker) pair and therefore needs seq_cst on both sides.

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "meshsim/runtime/exec/internal/fiber/doorbell.h"
#include "meshsim/runtime/exec/internal/futex.h"

namespace meshsim {

class alignas(64) WaitWord {
 public:
  static constexpr uint32_t kPoison = 1;
  static constexpr uint32_t kStep = 2;

  static bool is_poisoned(uint32_t value) { return (value & kPoison) != 0; }

  uint32_t load(std::memory_order order = std::memory_order_acquire) const {
    return value_.load(order);
  }

  // Moves the value forward by `steps` and wakes every sleeper. Returns the new value.
  uint32_t advance(uint32_t steps = 1) {
    const uint32_t now = value_.fetch_add(steps * kStep, std::memory_order_seq_cst) + steps * kStep;
    if (sleepers_.load(std::memory_order_seq_cst) != 0) futex_wake_all(value_);
    if (fiber_sleepers_.load(std::memory_order_seq_cst) != 0) ring_fiber_doorbell();
    return now;
  }

  // Sets the poison bit and wakes every sleeper (abort path).
  void poison() {
    value_.fetch_or(kPoison, std::memory_order_seq_cst);
    futex_wake_all(value_);
    ring_fiber_doorbell();
  }
  void clear_poison() { value_.fetch_and(~kPoison, std::memory_order_seq_cst); }
  // Back to 0, unpoisoned: only when no thread can wait on the word.
  void reset() { value_.store(0, std::memory_order_seq_cst); }

  static constexpr size_t kPayloadBytes = 64 - 3 * sizeof(uint32_t);
  std::byte* payload() { return payload_; }
  const std::byte* payload() const { return payload_; }

 private:
  friend class Waiter;
  std::atomic<uint32_t> value_{0};
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<uint32_t> fiber_sleepers_{0};
  std::byte payload_[kPayloadBytes];
};
static_assert(sizeof(WaitWord) == 64, "a WaitWord and its payload are one cache line");

}  // namespace meshsim
