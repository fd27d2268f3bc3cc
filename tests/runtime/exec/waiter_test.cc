// Waiter's adaptive spin-then-yield policy (threads <= cores): a spin that
// does not see its word change halves the next one down to none, one that
// does restores the whole spin, every kProbeEvery-th wait without a spin
// probes with the whole spin (a failed probe leaves none); what was learned
// lasts while the policy stays the same; and a yield that gave the core to another
// process for a slice makes the next kWaitsWithoutYield waits block right
// after their spin. Each step is read off spin_budget_ns() and
// waits_without_yield() after waits whose outcome the test fixes.

#include "meshsim/runtime/exec/internal/waiter.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/wait_policy.h"

namespace meshsim::waiter_test {
namespace {

using namespace std::chrono_literals;

constexpr WaitPolicy kSpinThenYield{.spin_ns = 4'000, .yield_ns = 100'000};

// A wait that no spin can end: another thread advances the word only once
// the waiter blocked on it (blocked_on()), so the wait always goes through
// its spin and yield phases first, however the threads are scheduled.
void wait_long(Waiter& waiter) {
  WaitWord word;
  const uint32_t seen = word.load();
  std::thread late([&] {
    while (waiter.blocked_on() != &word) std::this_thread::sleep_for(100us);
    word.advance();
  });
  EXPECT_NE(waiter.wait_change(word, seen), seen);
  late.join();
}

// A wait whose condition holds at its third check: the first is inline, the
// second opens the slow path, the third is the spin's first poll.
void wait_ending_in_the_spin(Waiter& waiter) {
  WaitWord word;
  int checks = 0;
  waiter.wait(word, [&](uint32_t) { return ++checks >= 3; });
  EXPECT_EQ(checks, 3);
}

// Waits that end without a spin, `count` of them (the condition holds at the
// third check: after the slow path's first yield when there is no spin).
void waits_without_spin(Waiter& waiter, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    WaitWord word;
    int checks = 0;
    waiter.wait(word, [&](uint32_t) { return ++checks >= 3; });
    EXPECT_EQ(waiter.spin_budget_ns(), 0) << "wait " << i;
  }
}

TEST(WaiterTest, AFailedSpinHalvesTheNextDownToNoneAndASuccessRestoresIt) {
  Waiter waiter;
  waiter.set_policy(kSpinThenYield);
  EXPECT_EQ(waiter.spin_budget_ns(), 4'000);
  for (const int64_t expected : {2'000, 1'000, 500, 250, 0}) {
    wait_long(waiter);
    EXPECT_EQ(waiter.spin_budget_ns(), expected);
  }
  // With no spin left, the kProbeEvery-th wait spins again. A probe that
  // fails leaves none; one whose condition holds in it restores the whole.
  waits_without_spin(waiter, Waiter::kProbeEvery - 1);
  wait_long(waiter);
  EXPECT_EQ(waiter.spin_budget_ns(), 0);
  waits_without_spin(waiter, Waiter::kProbeEvery - 1);
  wait_ending_in_the_spin(waiter);
  EXPECT_EQ(waiter.spin_budget_ns(), 4'000);
}

// A device's waiter keeps what it learned from launch to launch (each sets
// the same policy again), and forgets it for another policy.
TEST(WaiterTest, TheSamePolicyKeepsWhatWasLearnedAnotherForgetsIt) {
  Waiter waiter;
  waiter.set_policy(kSpinThenYield);
  wait_long(waiter);
  EXPECT_EQ(waiter.spin_budget_ns(), 2'000);
  waiter.set_policy(kSpinThenYield);
  EXPECT_EQ(waiter.spin_budget_ns(), 2'000);
  waiter.set_policy({.spin_ns = 8'000, .yield_ns = 100'000});
  EXPECT_EQ(waiter.spin_budget_ns(), 8'000);
}

// Pins the calling thread to `cpu`; false if the machine does not allow it.
bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

// A process-like busy thread on the waiter's own CPU: its yields then hand
// the core to it for a time slice (milliseconds), far beyond kSlowYieldNs.
// Without a spin phase (more threads than cores) a slow yield is no sign of
// load, since it ran a peer: nothing is learned then.
TEST(WaiterTest, AYieldThatLosesTheCoreForASliceMakesTheNextWaitsBlock) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed)) ++cpu;
  std::atomic<bool> stop{false};
  std::atomic<bool> pinned{true};
  std::thread busy([&] {
    if (!pin_to(cpu)) pinned = false;
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  std::optional<bool> slow_yield_seen;
  std::optional<uint32_t> learned_without_spin;
  std::thread waiting([&] {
    if (!pin_to(cpu)) {
      pinned = false;
      return;
    }
    Waiter oversubscribed;
    oversubscribed.set_policy({.spin_ns = 0, .yield_ns = 100'000});
    wait_long(oversubscribed);
    learned_without_spin = oversubscribed.waits_without_yield();
    Waiter waiter;
    waiter.set_policy(kSpinThenYield);
    // The first wait spins, then yields to the busy thread, whose slice
    // outlasts kSlowYieldNs; it then blocks until the word moves.
    wait_long(waiter);
    slow_yield_seen = waiter.waits_without_yield() == Waiter::kWaitsWithoutYield;
    // The next waits block at once after their spin: each uses up one.
    wait_long(waiter);
    wait_long(waiter);
    EXPECT_EQ(waiter.waits_without_yield(), Waiter::kWaitsWithoutYield - 2);
  });
  waiting.join();
  stop = true;
  busy.join();
  if (!pinned) GTEST_SKIP() << "cannot pin threads to one CPU here";
  ASSERT_TRUE(slow_yield_seen.has_value());
  EXPECT_TRUE(*slow_yield_seen);
  EXPECT_EQ(learned_without_spin, 0u);
}

}  // namespace
}  // namespace meshsim::waiter_test
