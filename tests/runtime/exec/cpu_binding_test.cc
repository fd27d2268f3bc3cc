// RuntimeOptions::bind_threads: which runtimes bind their device threads or
// fiber workers to CPUs, and that bound threads each get a CPU of their own.
// Each device reads its own thread's affinity mask from its body.

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/internal/cpu_binding.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/exec/wait_policy.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"

namespace meshsim::cpu_binding_test {
namespace {

using testing_support::ScopedEnv;

// The CPUs the calling thread may run on.
std::vector<int> my_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// Each position's CPUs, as its body sees them, on a mesh of `devices`.
std::vector<std::vector<int>> cpus_by_position(Runtime& runtime, int devices) {
  std::vector<std::vector<int>> cpus(devices);
  runtime.launch(Mesh::make({{"x", devices}}),
                 [&](DeviceContext& ctx) { cpus[ctx.position()] = my_cpus(); });
  return cpus;
}

RuntimeOptions threads(std::optional<bool> bind = std::nullopt) {
  RuntimeOptions options;
  options.execution = ExecutionMode::kThreads;
  options.bind_threads = bind;
  return options;
}

void expect_one_cpu_each_all_different(const std::vector<std::vector<int>>& cpus) {
  std::set<int> seen;
  for (const std::vector<int>& mine : cpus) {
    ASSERT_EQ(mine.size(), 1u);
    EXPECT_TRUE(std::ranges::count(usable_cpus(), mine[0]) == 1) << "CPU " << mine[0];
    EXPECT_TRUE(seen.insert(mine[0]).second) << "CPU " << mine[0] << " given twice";
  }
}

void expect_unbound(const std::vector<std::vector<int>>& cpus) {
  for (const std::vector<int>& mine : cpus) EXPECT_EQ(mine, usable_cpus());
}

TEST(CpuBindingTest, UsableCpusAreTheThreadsMask) {
  EXPECT_EQ(usable_cpus(), my_cpus());
  EXPECT_EQ(usable_cores(), static_cast<int>(usable_cpus().size()));
}

TEST(CpuBindingTest, DevicesNoMoreThanCoresGetACpuEach) {
  if (usable_cores() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  Runtime runtime(usable_cores(), threads());
  EXPECT_TRUE(runtime.binds_threads());
  expect_one_cpu_each_all_different(cpus_by_position(runtime, usable_cores()));
}

TEST(CpuBindingTest, OneDeviceOrMoreDevicesThanCoresAreNotBound) {
  Runtime one(1, threads());
  EXPECT_FALSE(one.binds_threads());
  expect_unbound(cpus_by_position(one, 1));
  Runtime many(usable_cores() + 1, threads());
  EXPECT_FALSE(many.binds_threads());
  expect_unbound(cpus_by_position(many, usable_cores() + 1));
  // Runtime(): up to kDefaultMaxDevices devices.
  EXPECT_FALSE(Runtime(threads()).binds_threads());
}

TEST(CpuBindingTest, TheOptionOverridesTheDefaultEitherWay) {
  if (usable_cores() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  Runtime unbound(2, threads(false));
  EXPECT_FALSE(unbound.binds_threads());
  expect_unbound(cpus_by_position(unbound, 2));

  // More devices than CPUs, bound anyway: device k and k + cores share one.
  const int n = usable_cores();
  Runtime bound(2 * n, threads(true));
  EXPECT_TRUE(bound.binds_threads());
  const std::vector<std::vector<int>> cpus = cpus_by_position(bound, 2 * n);
  expect_one_cpu_each_all_different({cpus.begin(), cpus.begin() + n});
  for (int k = 0; k < n; ++k) EXPECT_EQ(cpus[k], cpus[k + n]) << "device " << k;
}

TEST(CpuBindingTest, FiberWorkersGetACpuEach) {
  if (usable_cores() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  RuntimeOptions options;
  options.execution = ExecutionMode::kFibers;
  options.fiber_workers = 2;
  // With a launch timeout the launching thread runs no fibers itself: every
  // device runs on a worker.
  options.launch_timeout = std::chrono::seconds(60);
  Runtime runtime(8, options);
  EXPECT_TRUE(runtime.binds_threads());
  const std::vector<std::vector<int>> cpus = cpus_by_position(runtime, 8);
  // Worker 0 runs positions 0-3, worker 1 positions 4-7.
  expect_one_cpu_each_all_different({cpus[0], cpus[4]});
  for (int p = 0; p < 8; ++p) EXPECT_EQ(cpus[p], cpus[p < 4 ? 0 : 4]) << "position " << p;

  options.fiber_workers = usable_cores() + 1;
  EXPECT_FALSE(Runtime(8, options).binds_threads());
}

TEST(CpuBindingTest, TheEnvironmentChoosesWhenTheOptionIsUnset) {
  if (usable_cores() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  {
    const ScopedEnv none("MESHSIM_BIND", "none");
    Runtime runtime(2, threads());
    EXPECT_FALSE(runtime.binds_threads());
    expect_unbound(cpus_by_position(runtime, 2));
    EXPECT_TRUE(Runtime(2, threads(true)).binds_threads());  // the option wins
  }
  {
    const ScopedEnv cores("MESHSIM_BIND", "cores");
    EXPECT_TRUE(Runtime(usable_cores() + 1, threads()).binds_threads());
  }
  {
    const ScopedEnv empty("MESHSIM_BIND", "");
    EXPECT_TRUE(Runtime(2, threads()).binds_threads());
  }
  const ScopedEnv typo("MESHSIM_BIND", "core");
  EXPECT_ERROR(Runtime(2, threads()), InvalidArgumentError, "MESHSIM_BIND: unknown binding 'core'");
  const ScopedEnv odd("MESHSIM_BIND", "none\n\xff");
  EXPECT_ERROR(Runtime(2, threads()), InvalidArgumentError, "binding 'none\\x0a\\xff':");
}

// A runtime made in the body of a bound device uses the CPUs of the body's
// runtime, not the device's one CPU: its unbound threads run on all of them
// (a Linux thread inherits its creator's mask), and it binds as it would on
// the host.
TEST(CpuBindingTest, ARuntimeMadeInABoundBodyUsesAllTheCpus) {
  if (usable_cores() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  for (const ExecutionMode mode : {ExecutionMode::kThreads, ExecutionMode::kFibers}) {
    RuntimeOptions outer_options;
    outer_options.execution = mode;
    outer_options.launch_timeout = std::chrono::seconds(60);  // bodies on workers
    Runtime outer(2, outer_options);
    ASSERT_TRUE(outer.binds_threads());
    std::vector<std::vector<int>> inner_unbound, inner_bound;
    std::vector<int> body_cpus;
    outer.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
      if (ctx.position() != 1) return;
      body_cpus = my_cpus();
      Runtime unbound(usable_cores() + 1, threads());
      inner_unbound = cpus_by_position(unbound, usable_cores() + 1);
      Runtime bound(2, threads());
      EXPECT_TRUE(bound.binds_threads());
      inner_bound = cpus_by_position(bound, 2);
    });
    EXPECT_EQ(body_cpus.size(), 1u);
    expect_unbound(inner_unbound);
    expect_one_cpu_each_all_different(inner_bound);
  }
}

// Waits plan for the CPUs they are given (a runtime gives its own), not for
// the calling thread's: a thread a bound body starts has one CPU, but a
// runtime it makes launches devices that each have theirs.
// Where a runtime's bound threads start: on the CPUs that hold the fewest
// bound threads of the process's live runtimes, the first counting from the
// CPU it was made on (`preferred`).
TEST(CpuBindingTest, TheLeastLoadedStartCountsFromThePreferredCpu) {
  EXPECT_EQ(least_loaded_first(std::vector{0, 0, 0, 0}, 2, 1), 1u);  // a tie: preferred
  EXPECT_EQ(least_loaded_first(std::vector{1, 1, 0, 0}, 2, 0), 2u);
  EXPECT_EQ(least_loaded_first(std::vector{0, 5, 0, 0}, 2, 0), 2u);  // not 3: counted from 0
  EXPECT_EQ(least_loaded_first(std::vector{0, 5, 0, 0}, 2, 3), 3u);  // 3 and 0, wrapping
  EXPECT_EQ(least_loaded_first(std::vector{0, 1, 1, 0}, 2, 1), 3u);
  EXPECT_EQ(least_loaded_first(std::vector{2, 0, 1}, 1, 0), 1u);
  // More threads than CPUs: each CPU takes threads / count of them, and the
  // `threads % count` extra ones go where the fewest are.
  EXPECT_EQ(least_loaded_first(std::vector{1, 0}, 3, 0), 1u);
  EXPECT_EQ(least_loaded_first(std::vector{1, 0}, 4, 0), 0u);  // every start is the same
  EXPECT_EQ(least_loaded_first(std::vector{7}, 5, 0), 0u);
}

// Runtimes alive at once bind their threads to different CPUs where there
// are enough, instead of all starting on the CPU they were made on; a
// destroyed runtime's CPUs are free again.
TEST(CpuBindingTest, RuntimesAliveAtOnceBindToDifferentCpus) {
  if (usable_cpus().size() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  auto cpu_of = [](Runtime& runtime) {
    const std::vector<std::vector<int>> cpus = cpus_by_position(runtime, 1);
    EXPECT_EQ(cpus[0].size(), 1u);
    return cpus[0].front();
  };
  auto a = std::make_unique<Runtime>(1, threads(true));
  Runtime b(1, threads(true));
  const int cpu_a = cpu_of(*a);
  const int cpu_b = cpu_of(b);
  EXPECT_NE(cpu_a, cpu_b);
  a.reset();
  Runtime c(1, threads(true));
  // With two CPUs, `b`'s holds a thread and `a`'s none.
  if (usable_cpus().size() == 2) EXPECT_EQ(cpu_of(c), cpu_a);
  EXPECT_NE(cpu_of(c), cpu_b);
}

TEST(CpuBindingTest, WaitPoliciesPlanForTheCoresGiven) {
  EXPECT_GT(WaitPolicy::for_threads(2, 2).spin_ns, 0);
  EXPECT_EQ(WaitPolicy::for_threads(2, 1).spin_ns, 0);
  EXPECT_EQ(WaitPolicy::for_threads(2, 0), WaitPolicy::for_threads(2, 1));
  EXPECT_GT(WaitPolicy::idle_after(2, 2).yield_ns, WaitPolicy::idle_after(2, 1).yield_ns);
  EXPECT_EQ(WaitPolicy::for_threads(3), WaitPolicy::for_threads(3, usable_cores()));
}

// The usable CPUs are read when a runtime is made: a mask the program set
// since then counts.
TEST(CpuBindingTest, TheMaskIsReadWhenARuntimeIsMade) {
  if (usable_cores() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  const std::vector<int> all = usable_cpus();
  EXPECT_TRUE(Runtime(2, threads()).binds_threads());
  const auto set_mask = [](const std::vector<int>& cpus) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu : cpus) CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set) == 0;
  };
  struct Restore {
    std::function<bool()> restore;
    ~Restore() { EXPECT_TRUE(restore()); }
  } restore{[&] { return set_mask(all); }};
  ASSERT_TRUE(set_mask({all.back()}));
  Runtime runtime(2, threads());
  EXPECT_FALSE(runtime.binds_threads());  // one usable CPU: nothing to bind
  for (const std::vector<int>& mine : cpus_by_position(runtime, 2)) {
    EXPECT_EQ(mine, std::vector<int>{all.back()});
  }
}

}  // namespace
}  // namespace meshsim::cpu_binding_test
