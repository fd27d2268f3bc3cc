#pragma once
// Thin wrappers over the Linux futex system call on a std::atomic<uint32_t>.
// We call the futex directly rather than std::atomic::wait because meshsim
// needs its own spin/yield policy (libstdc++'s wait spins on its own terms)
// and wake-ups that cost nothing when nobody sleeps (WaitWord counts sleepers).

#include <atomic>
#include <chrono>
#include <cstdint>

namespace meshsim {

// Blocks while `word` holds `expected` (returns at once otherwise). May return
// spuriously: callers always re-read the word.
void futex_wait(const std::atomic<uint32_t>& word, uint32_t expected);
// As futex_wait, but gives up after `timeout`.
void futex_wait_for(const std::atomic<uint32_t>& word, uint32_t expected,
                    std::chrono::nanoseconds timeout);
// Wakes every thread blocked on `word`.
void futex_wake_all(const std::atomic<uint32_t>& word);

}  // namespace meshsim
