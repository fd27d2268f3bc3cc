// The machine references: the memcpy runner must copy exactly (a reference
// that copies the wrong bytes would measure the wrong thing), the yield barrier
// must hold every thread until all have arrived, also with more threads than
// cores, and the measurements must report what they measured.

#include "tools/bench_machine.h"

#include <gtest/gtest.h>

#include "meshsim/mesh/error.h"

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace meshsim::cli {
namespace {

TEST(MemcpyRunner, CopiesTheSourceExactlyWithAnyThreadCount) {
  for (const int threads : {1, 2, 3}) {
    for (const size_t bytes : {size_t{1}, size_t{1001}, size_t{1} << 20}) {
      MemcpyRunner runner(bytes, threads);
      EXPECT_GT(runner.run(2), 0.0);
      const auto copy = runner.destination();
      ASSERT_EQ(copy.size(), bytes);
      size_t wrong = 0;
      for (size_t i = 0; i < bytes; ++i) wrong += copy[i] != static_cast<std::byte>(i % 251);
      EXPECT_EQ(wrong, 0u) << threads << " threads, " << bytes << " bytes";
    }
  }
}

TEST(MemcpyRunner, RejectsFewerThanOneThread) {
  EXPECT_THROW(MemcpyRunner(64, 0), InvalidArgumentError);
}

TEST(MemcpyRunner, RunsRepeatedlyAndStopsCleanly) {
  MemcpyRunner runner(4096, 2);
  for (int run = 0; run < 100; ++run) ASSERT_GT(runner.run(), 0.0);
}

TEST(MeasureMemcpy, RepeatsSmallCopiesUpToTheRunBytes) {
  const MemcpyReference small = measure_memcpy(4096, 2, 3);
  EXPECT_EQ(small.bytes, 4096u);
  EXPECT_EQ(small.threads, 2);
  EXPECT_EQ(small.repeats, 3);
  EXPECT_EQ(small.copies_per_run, kMemcpyRunBytes / 4096);
  EXPECT_GT(small.gbps(), 0.0);
  EXPECT_EQ(measure_memcpy(kMemcpyRunBytes * 2, 1, 1).copies_per_run, 1u);
}

TEST(MemcpyReferenceBytes, IsTheDevicesWorkingSetUpToTheCap) {
  EXPECT_EQ(memcpy_reference_bytes(8, size_t{16} << 20), size_t{128} << 20);
  EXPECT_EQ(memcpy_reference_bytes(1, 256), 256u);
  EXPECT_EQ(memcpy_reference_bytes(4096, size_t{1} << 20), kMaxReferenceBytes);
  EXPECT_EQ(memcpy_reference_bytes(2, ~size_t{0}), kMaxReferenceBytes);  // no overflow
  EXPECT_EQ(memcpy_reference_bytes(8, 0), 8u);  // never an empty copy
}

// Every thread adds 1 before each episode; after the episode it must see all
// threads' additions of that episode, and none of the next (nobody may leave
// early nor run ahead into the next episode's count before all have read it).
void expect_barrier_holds(int threads, int episodes) {
  YieldBarrier barrier(threads);
  std::atomic<int> arrivals{0};
  std::atomic<int> violations{0};
  {
    std::vector<std::jthread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&] {
        for (int e = 0; e < episodes; ++e) {
          arrivals.fetch_add(1);
          barrier.arrive_and_wait();
          if (arrivals.load() != (e + 1) * threads) violations.fetch_add(1);
          barrier.arrive_and_wait();
        }
      });
    }
  }
  EXPECT_EQ(violations.load(), 0) << threads << " threads";
  EXPECT_EQ(arrivals.load(), threads * episodes);
}

TEST(YieldBarrier, HoldsEveryThreadUntilAllArrive) {
  expect_barrier_holds(2, 2000);
  expect_barrier_holds(3, 500);
}

TEST(YieldBarrier, HoldsWithMoreThreadsThanCores) {
  expect_barrier_holds(64, 20);
}

TEST(MeasureMeetingFloor, ReportsBothBarriersOnTheMeshDevices) {
  RuntimeOptions threads;
  threads.execution = ExecutionMode::kThreads;
  Runtime runtime(6, threads);
  const MeetingFloor floor = measure_meeting_floor(runtime, Mesh::make({{"x", 2}, {"y", 2}}));
  EXPECT_EQ(floor.threads, 4);
  EXPECT_EQ(floor.execution, ExecutionMode::kThreads);
  EXPECT_GT(floor.yield_barrier_us, 0.0);
  ASSERT_TRUE(floor.std_barrier_us.has_value());
  EXPECT_GT(*floor.std_barrier_us, 0.0);
}

// On fibers the yield barrier waits by DeviceContext::yield (8 devices on 2
// workers meet), and std::barrier, which would block a worker, is not run.
TEST(MeasureMeetingFloor, OnFibersReportsTheYieldBarrierOnly) {
  RuntimeOptions fibers;
  fibers.execution = ExecutionMode::kFibers;
  fibers.fiber_workers = 2;
  Runtime runtime(8, fibers);
  const MeetingFloor floor = measure_meeting_floor(runtime, Mesh::make({{"x", 8}}));
  EXPECT_EQ(floor.threads, 8);
  EXPECT_EQ(floor.execution, ExecutionMode::kFibers);
  EXPECT_EQ(floor.fiber_workers, 2);
  EXPECT_GT(floor.yield_barrier_us, 0.0);
  EXPECT_FALSE(floor.std_barrier_us.has_value());
}

}  // namespace
}  // namespace meshsim::cli
