// The fiber execution mode through the public API: the same answers as
// thread mode (closed-form sums and gathers) with far more devices than
// workers, down to one worker; cancellation, deadlock, timeout and nested
// launches; each fiber's own exception state; and the settings' errors.
// (The whole suite also runs in fiber mode: MESHSIM_EXEC=fibers in .ci/run.)

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"

namespace meshsim::fiber_mode_test {
namespace {

using namespace std::chrono_literals;

RuntimeOptions fibers(int workers, std::chrono::milliseconds timeout = 60s) {
  RuntimeOptions options;
  options.execution = ExecutionMode::kFibers;
  options.fiber_workers = workers;
  options.launch_timeout = timeout;
  return options;
}

float only(const Array& a) { return a.at<float>({0}); }

using testing_support::ScopedEnv;

TEST(ExecutionModeTest, ParsesBothNamesAndRejectsOthers) {
  EXPECT_EQ(parse_execution_mode("threads"), ExecutionMode::kThreads);
  EXPECT_EQ(parse_execution_mode("fibers"), ExecutionMode::kFibers);
  EXPECT_STREQ(to_string(ExecutionMode::kFibers), "fibers");
  EXPECT_STREQ(to_string(ExecutionMode::kThreads), "threads");
  EXPECT_ERROR(parse_execution_mode("fiber"), InvalidArgumentError,
               "unknown execution mode 'fiber': expected 'threads' or 'fibers'");
  EXPECT_ERROR(parse_execution_mode(""), InvalidArgumentError, "unknown execution mode ''");
}

TEST(ExecutionModeTest, TheEnvironmentChoosesTheDefaultAndOptionsOverrideIt) {
  {
    const ScopedEnv env("MESHSIM_EXEC", "fibers");
    Runtime rt(2);
    EXPECT_EQ(rt.execution(), ExecutionMode::kFibers);
    EXPECT_EQ(rt.fiber_workers(), usable_cores());
    RuntimeOptions threads;
    threads.execution = ExecutionMode::kThreads;
    Runtime explicit_threads(2, threads);
    EXPECT_EQ(explicit_threads.execution(), ExecutionMode::kThreads);
    EXPECT_EQ(explicit_threads.fiber_workers(), 0);
  }
  {
    const ScopedEnv env("MESHSIM_EXEC", "threads");
    EXPECT_EQ(Runtime(1).execution(), ExecutionMode::kThreads);
  }
  const ScopedEnv env("MESHSIM_EXEC", "gpu");
  EXPECT_ERROR(Runtime(2), InvalidArgumentError,
               "environment variable MESHSIM_EXEC: unknown execution mode 'gpu'");
}

TEST(ExecutionModeTest, FiberSettingsOutOfRangeAreErrors) {
  RuntimeOptions options = fibers(-1);
  EXPECT_ERROR(Runtime(2, options), InvalidArgumentError,
               "RuntimeOptions::fiber_workers must be 0 (one per usable core) to 1024, got -1");
  options = fibers(5000);
  EXPECT_ERROR(Runtime(2, options), InvalidArgumentError, "got 5000");
  options = fibers(1);
  options.fiber_stack_bytes = 4096;
  EXPECT_ERROR(Runtime(2, options), InvalidArgumentError,
               "RuntimeOptions::fiber_stack_bytes must be 64 KiB to 1 GiB, got 4096");
  // A wrong value is an error in thread mode too, where it would go unused.
  options.execution = ExecutionMode::kThreads;
  EXPECT_ERROR(Runtime(2, options), InvalidArgumentError, "fiber_stack_bytes");
}

// Eight devices on one worker: every meeting is made by parking alone, with
// no second thread to help. psum of the ids is 0+...+7 = 28; all_gather
// returns the ids in order; ppermute by +1 brings id-1.
TEST(FiberModeTest, EightDevicesOnOneWorkerMeetByParking) {
  Runtime rt(8, fibers(1));
  ASSERT_EQ(rt.fiber_workers(), 1);
  const Mesh mesh = Mesh::make({{"x", 8}});
  std::vector<int> wrong(8, 0);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const int id = ctx.device_id();
    const Array mine = Array::full({1}, DType::kFloat32, id);
    std::vector<std::pair<int, int>> shift;
    for (int i = 0; i < 8; ++i) shift.emplace_back(i, (i + 1) % 8);
    for (int round = 0; round < 50; ++round) {
      if (only(psum(ctx, mine, "x")) != 28.0f) ++wrong[id];
      const Array all = all_gather(ctx, mine, "x");
      for (int i = 0; i < 8; ++i) {
        if (all.at<float>({i, 0}) != static_cast<float>(i)) ++wrong[id];
      }
      if (only(ppermute(ctx, mine, "x", shift)) != static_cast<float>((id + 7) % 8)) ++wrong[id];
    }
  });
  EXPECT_EQ(wrong, std::vector<int>(8, 0));
}

// Groups laid over the workers every way: over 'y' and 'x' of a 3x4 mesh, 2,
// 3 and 5 workers make groups within one worker, groups spread over several
// with several members on each, and groups mixing those with members alone
// on their worker; yields at uneven rounds let some workers run a whole
// meeting ahead of a member still parked on the one before. Every psum must
// still meet, with the closed-form sums: over 'y', 4x + 0 + ... + 4x + 3 =
// 16x + 6; over 'x', y + (4 + y) + (8 + y) = 12 + 3y.
TEST(FiberModeTest, GroupsOverAnyLayoutOfWorkersMeetWhenSomeRunAhead) {
  for (const int workers : {2, 3, 5}) {
    Runtime rt(12, fibers(workers));
    const Mesh mesh = Mesh::make({{"x", 3}, {"y", 4}});
    std::vector<int> wrong(12, 0);
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const int id = ctx.device_id();
      const int x = id / 4, y = id % 4;
      const Array mine = Array::full({1}, DType::kFloat32, id);
      for (int round = 0; round < 2000; ++round) {
        if (only(psum(ctx, mine, "y")) != static_cast<float>(16 * x + 6)) ++wrong[id];
        if (only(psum(ctx, mine, "x")) != static_cast<float>(12 + 3 * y)) ++wrong[id];
        if (round % 7 == id % 7) ctx.yield();
      }
    });
    EXPECT_EQ(wrong, std::vector<int>(12, 0)) << workers << " workers";
  }
}

// 4096 devices on the default workers: one launch with a psum of ones
// (4096 everywhere) and an all_gather of the ids (0..4095 in order).
TEST(FiberModeTest, FourThousandDevicesPsumAndAllGather) {
  constexpr int n = 4096;
  Runtime rt(n, fibers(0));
  std::atomic<int> wrong{0};
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    if (only(psum(ctx, Array::full({1}, DType::kFloat32, 1.0), "x")) != n) wrong.fetch_add(1);
    const Array ids = all_gather(ctx, Array::full({1}, DType::kInt32, ctx.device_id()), "x",
                                 AllGatherOptions{.tiled = true});
    // Spot checks per device keep the test O(n): every device checks its own
    // slot and two others; together they cover every slot.
    for (int i : {ctx.device_id(), (ctx.device_id() * 7 + 1) % n, n - 1 - ctx.device_id()}) {
      if (ids.at<int32_t>({i}) != i) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

// A fiber that parks inside a catch block keeps its own exception: the C++
// runtime's caught-exception stack is per thread, and four fibers share the
// one worker here. Each device rethrows what it caught after a psum that
// parked it; each must get its own message back.
TEST(FiberModeTest, AFiberParkedInACatchBlockKeepsItsOwnException) {
  Runtime rt(4, fibers(1));
  std::vector<std::string> rethrown(4);
  std::vector<int> uncaught_in_handler(4, -1);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    const int id = ctx.device_id();
    try {
      throw std::runtime_error("thrown by device " + std::to_string(id));
    } catch (const std::runtime_error&) {
      psum(ctx, Array::full({1}, DType::kFloat32, 1.0), "x");  // parks; the others throw meanwhile
      uncaught_in_handler[id] = std::uncaught_exceptions();
      try {
        throw;  // rethrows the exception being handled, which must be this device's
      } catch (const std::runtime_error& again) {
        rethrown[id] = again.what();
      }
    }
  });
  for (int id = 0; id < 4; ++id) {
    EXPECT_EQ(rethrown[id], "thrown by device " + std::to_string(id));
    EXPECT_EQ(uncaught_in_handler[id], 0) << "device " << id;
  }
}

// Without a launch timeout the launching thread runs devices 0-2 itself
// (FiberRunner::run_to_end); with one it keeps watch. Both ways, here and below.
class FiberModeBothWaysTest : public ::testing::TestWithParam<std::chrono::milliseconds> {};
INSTANTIATE_TEST_SUITE_P(Timeouts, FiberModeBothWaysTest, ::testing::Values(0ms, 60s),
                         [](const auto& info) {
                           return info.param.count() == 0 ? std::string("LaunchingThreadRuns")
                                                          : std::string("LaunchingThreadWatches");
                         });

TEST_P(FiberModeBothWaysTest, AFailingDeviceCancelsTheOthersAndTheRuntimeStaysUsable) {
  Runtime rt(6, fibers(2, GetParam()));
  const Mesh mesh = Mesh::make({{"x", 6}});
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() == 3) throw std::runtime_error("boom");
                           psum(ctx, Array::full({1}, DType::kFloat32, 1.0), "x");
                         }),
               DeviceError, "device 3: std::runtime_error: boom");
  std::atomic<int> wrong{0};
  rt.launch(mesh, [&](DeviceContext& ctx) {
    if (only(psum(ctx, Array::full({1}, DType::kFloat32, 1.0), "x")) != 6.0f) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST_P(FiberModeBothWaysTest, DeadlocksAreFoundOnOneWorker) {
  Runtime rt(2, fibers(1, GetParam()));
  const std::vector<std::pair<int, int>> perm = {{0, 1}};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) { precv(ctx, {}, {1}, DType::kFloat32, "x", perm); }),
               DeadlockError, "device 1: waiting in precv on axes 'x'");
  // Half the devices in a psum the other half never calls.
  Runtime wide(64, fibers(2, GetParam()));
  EXPECT_ERROR(wide.launch(Mesh::make({{"x", 64}}),
                           [&](DeviceContext& ctx) {
                             if (ctx.device_id() % 2 == 0) {
                               psum(ctx, Array::full({1}, DType::kFloat32, 1.0), "x");
                             }
                           }),
               DeadlockError, "deadlock");
}

// A device busy in its own code (yielding, as fiber-mode spin loops must)
// past the timeout: the launch fails with the report, its peers' waits are
// cancelled, and its own next wait is too.
TEST(FiberModeTest, TimeoutCancelsTheWaitsAndReportsTheBusyDevice) {
  Runtime rt(4, fibers(2, 100ms));
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() == 1) {
                             const auto until = std::chrono::steady_clock::now() + 400ms;
                             while (std::chrono::steady_clock::now() < until) ctx.yield();
                           }
                           barrier(ctx, "x");
                         }),
               TimeoutError, "device 1: running its own code");
}

// A device body launching on other devices parks while it waits, so its
// worker runs the inner launch's fibers too; on its own devices it is the
// usual RuntimeUsageError. Into a thread-mode runtime it parks as well.
TEST(FiberModeTest, NestedLaunchesFromAFiber) {
  Runtime rt(8, fibers(1));
  Runtime threads(2);
  std::atomic<int> inner_sum{0}, other_runtime_sum{0};
  rt.launch(Mesh(AbstractMesh({{"x", 4}}), {0, 1, 2, 3}), [&](DeviceContext& ctx) {
    if (ctx.device_id() != 0) return;
    rt.launch(Mesh(AbstractMesh({{"y", 4}}), {4, 5, 6, 7}), [&](DeviceContext& inner) {
      const float sum = only(psum(inner, Array::full({1}, DType::kFloat32, inner.device_id()), "y"));
      if (inner.device_id() == 4) inner_sum = static_cast<int>(sum);
    });
    threads.launch(Mesh::make({{"z", 2}}), [&](DeviceContext& other) {
      const float sum = only(psum(other, Array::full({1}, DType::kFloat32, 10.0), "z"));
      if (other.device_id() == 0) other_runtime_sum = static_cast<int>(sum);
    });
  });
  EXPECT_EQ(inner_sum.load(), 4 + 5 + 6 + 7);
  EXPECT_EQ(other_runtime_sum.load(), 20);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() == 0) rt.launch(Mesh(AbstractMesh({{"y", 1}}), {1}), [](DeviceContext&) {});
                         }),
               RuntimeUsageError, "would wait forever");
}

// A launching thread with nothing else to do runs the first block of the
// launch's fibers itself (worker 0's share): with 2 workers, positions 0-3
// run on it and 4-7 on a worker. With a launch timeout it keeps watch and
// runs none, and so does a device fiber launching a nested launch. The
// answers are the same either way.
TEST(FiberModeTest, TheLaunchingThreadRunsTheFirstBlockUnlessItKeepsWatch) {
  const auto threads_of = [](Runtime& rt, const Mesh& mesh) {
    std::vector<std::thread::id> on(static_cast<size_t>(mesh.size()));
    rt.launch(mesh, [&](DeviceContext& ctx) {
      on[static_cast<size_t>(ctx.position())] = std::this_thread::get_id();
      EXPECT_EQ(only(psum(ctx, Array::full({1}, DType::kFloat32, 1), "x")),
                static_cast<float>(mesh.size()));
    });
    return on;
  };
  const std::thread::id me = std::this_thread::get_id();
  const Mesh eight = Mesh::make({{"x", 8}});

  Runtime waiting(8, fibers(2, 0ms));
  const auto on = threads_of(waiting, eight);
  for (size_t p = 0; p < 8; ++p) EXPECT_EQ(on[p] == me, p < 4) << "position " << p;

  Runtime one_worker(8, fibers(1, 0ms));
  EXPECT_THAT(threads_of(one_worker, eight), testing::Each(me));

  Runtime watching(8, fibers(2, 60s));
  EXPECT_THAT(threads_of(watching, eight), testing::Each(testing::Ne(me)));

  std::vector<std::thread::id> inner;
  waiting.launch(Mesh(AbstractMesh({{"y", 4}}), {0, 1, 2, 3}), [&](DeviceContext& ctx) {
    if (ctx.device_id() != 0) return;
    EXPECT_EQ(std::this_thread::get_id(), me);
    inner = threads_of(waiting, Mesh(AbstractMesh({{"x", 4}}), {4, 5, 6, 7}));
  });
  ASSERT_EQ(inner.size(), 4u);
  EXPECT_THAT(inner, testing::Each(testing::Ne(me)));
}

// Two host threads launch on disjoint halves of one runtime at once.
TEST(FiberModeTest, ConcurrentLaunchesOnDisjointMeshes) {
  Runtime rt(8, fibers(2));
  std::atomic<int> wrong{0};
  auto host = [&](std::vector<int> ids, float expected) {
    const Mesh mesh(AbstractMesh({{"x", 4}}), ids);
    for (int i = 0; i < 100; ++i) {
      rt.launch(mesh, [&](DeviceContext& ctx) {
        if (only(psum(ctx, Array::full({1}, DType::kFloat32, ctx.device_id()), "x")) != expected) {
          wrong.fetch_add(1);
        }
      });
    }
  };
  std::thread a(host, std::vector<int>{0, 2, 4, 6}, 12.0f);
  std::thread b(host, std::vector<int>{1, 3, 5, 7}, 16.0f);
  a.join();
  b.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A spin loop that yields sees its peer on the same worker; a context used
// by another device is refused as in thread mode.
TEST(FiberModeTest, YieldingSpinLoopsProgressAndForeignContextsAreRefused) {
  Runtime rt(2, fibers(1));
  std::atomic<bool> flag{false};
  std::atomic<DeviceContext*> first{nullptr};
  bool refused = false;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.device_id() == 0) {
      first = &ctx;
      while (!flag.load()) ctx.yield();
    } else {
      while (first.load() == nullptr) ctx.yield();
      try {
        first.load()->device_id();
      } catch (const RuntimeUsageError&) {
        refused = true;
      }
      flag = true;
    }
  });
  EXPECT_TRUE(refused);
}

// A body with a 100 KiB frame runs on the default 256 KiB fiber stack.
TEST(FiberModeTest, BodiesGetTheirStack) {
  Runtime rt(4, fibers(2));
  std::atomic<int> sum{0};
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    std::array<volatile char, 100 << 10> frame{};
    for (size_t i = 0; i < frame.size(); i += 4096) frame[i] = static_cast<char>(ctx.device_id());
    int local = 0;
    for (size_t i = 0; i < frame.size(); i += 4096) local += frame[i];
    sum.fetch_add(local);
  });
  EXPECT_EQ(sum.load(), (0 + 1 + 2 + 3) * static_cast<int>((100 << 10) / 4096));
}

}  // namespace
}  // namespace meshsim::fiber_mode_test

namespace meshsim::fiber_mode_test {
namespace {

// Stacks are taken per launch and given back: 64 devices map 64 stacks, and
// ten more launches map at most one more per worker (a worker gives a stack
// back just after its fiber's launch has returned, so the next launch may
// find it still taken); only the pages the bodies touched are resident.
TEST(FiberModeTest, StacksAreReusedAndOnlyTouchedPagesAreResident) {
  Runtime rt(64, fibers(2));
  const Mesh mesh = Mesh::make({{"x", 64}});
  const auto body = [](DeviceContext& ctx) { psum(ctx, Array::full({1}, DType::kFloat32, 1.0), "x"); };
  rt.launch(mesh, body);
  const FiberStackStats first = rt.fiber_stack_stats();
  for (int i = 0; i < 10; ++i) rt.launch(mesh, body);
  const FiberStackStats second = rt.fiber_stack_stats();
  EXPECT_EQ(first.stacks, 64u);
  EXPECT_LE(second.stacks, 64u + static_cast<size_t>(rt.fiber_workers()));
  EXPECT_LE(second.guarded, second.stacks);
  // 256 KiB usable each, plus a page of guard for the guarded ones.
  const size_t page = 4096;
  EXPECT_EQ(second.reserved_bytes, second.stacks * (size_t{256} << 10) + second.guarded * page);
  EXPECT_GT(second.resident_bytes, 0u);
  EXPECT_LT(second.resident_bytes, second.reserved_bytes / 4);
  // Thread mode has none.
  RuntimeOptions threads;
  threads.execution = ExecutionMode::kThreads;
  EXPECT_EQ(Runtime(2, threads).fiber_stack_stats().stacks, 0u);
}

// 65,536 devices (a 256 x 256 mesh) in one launch: psum over both axes is
// n everywhere; all_gather over y returns the y indices 0..255 in order.
TEST(FiberModeTest, SixtyFiveThousandDevicesPsumAndAllGather) {
  constexpr int kSide = 256, n = kSide * kSide;
  RuntimeOptions options = fibers(0);
  options.max_devices = n;
  options.fiber_stack_bytes = size_t{64} << 10;
  Runtime rt(options);
  std::atomic<int> wrong{0};
  rt.launch(Mesh::make({{"x", kSide}, {"y", kSide}}), [&](DeviceContext& ctx) {
    const float total = psum(ctx, Array::full({1}, DType::kFloat32, 1.0), {"x", "y"}).at<float>({0});
    if (total != static_cast<float>(n)) wrong.fetch_add(1);
    const Array ys = all_gather(ctx, Array::full({1}, DType::kInt32, ctx.axis_index("y")), "y",
                                AllGatherOptions{.tiled = true});
    for (int i : {0, ctx.axis_index("y"), kSide - 1}) {
      if (ys.at<int32_t>({i}) != i) wrong.fetch_add(1);
    }
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(rt.fiber_stack_stats().stacks, static_cast<size_t>(n));
}

}  // namespace
}  // namespace meshsim::fiber_mode_test
