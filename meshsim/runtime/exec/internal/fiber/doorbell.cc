#include "meshsim/runtime/exec/internal/fiber/doorbell.h"

#include <atomic>

#include "meshsim/runtime/exec/internal/futex.h"

namespace meshsim {
namespace {

struct Doorbell {
  alignas(64) std::atomic<uint32_t> value{0};
  alignas(64) std::atomic<uint32_t> sleepers{0};
};

Doorbell& doorbell() {
  static Doorbell instance;
  return instance;
}

}  // namespace

uint32_t fiber_doorbell_value() { return doorbell().value.load(std::memory_order_seq_cst); }

void ring_fiber_doorbell() {
  Doorbell& bell = doorbell();
  bell.value.fetch_add(1, std::memory_order_seq_cst);
  if (bell.sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(bell.value);
}

void sleep_on_fiber_doorbell(uint32_t seen, std::chrono::nanoseconds timeout) {
  Doorbell& bell = doorbell();
  // Announce, then re-read (the Dekker pair with ring()).
  bell.sleepers.fetch_add(1, std::memory_order_seq_cst);
  if (bell.value.load(std::memory_order_seq_cst) == seen) {
    if (timeout.count() < 0) {
      futex_wait(bell.value, seen);
    } else {
      futex_wait_for(bell.value, seen, timeout);
    }
  }
  bell.sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

}  // namespace meshsim
