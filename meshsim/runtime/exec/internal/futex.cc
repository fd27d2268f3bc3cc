#include "meshsim/runtime/exec/internal/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>

namespace meshsim {
namespace {
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

uint32_t* address(const std::atomic<uint32_t>& word) {
  return reinterpret_cast<uint32_t*>(const_cast<std::atomic<uint32_t>*>(&word));
}
}  // namespace

void futex_wait(const std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wait_for(const std::atomic<uint32_t>& word, uint32_t expected,
                    std::chrono::nanoseconds timeout) {
  if (timeout.count() <= 0) return;
  const timespec relative{.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000),
                          .tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000)};
  syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, expected, &relative, nullptr, 0);
}

void futex_wake_all(const std::atomic<uint32_t>& word) {
  syscall(SYS_futex, address(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace meshsim
