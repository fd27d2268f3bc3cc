// Runtime: launches, contexts, failure propagation and reuse, concurrency,
// deadlock detection, and the rendezvous underneath every collective.

#include "meshsim/runtime/exec/runtime.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <atomic>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/claim_waits.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"

namespace meshsim::runtime_test {
namespace {

// A plain barrier over `axes` through the group rendezvous.
void barrier(DeviceContext& ctx, const AxisNames& axes) {
  const GroupRef g = DeviceHooks::group(ctx, axes);
  const CollectiveCall call("barrier", DType::kFloat32, {});
  g.rendezvous->slot(g.rank).publish(call, nullptr, nullptr);
  g.rendezvous->meet(g.rank, DeviceHooks::waiter(ctx));
}

TEST(RuntimeTest, EveryDeviceRunsOnceWithItsCoordinates) {
  Runtime rt(8);
  const Mesh mesh = Mesh::make({{"x", 4}, {"y", 2}});
  std::vector<int> ids(8, -1), x(8, -1), y(8, -1), xy(8, -1), yx(8, -1), sizes(8, -1);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const int p = ctx.position();
    ids[p] = ctx.device_id();
    x[p] = ctx.axis_index("x");
    y[p] = ctx.axis_index("y");
    xy[p] = ctx.axis_index({"x", "y"});
    yx[p] = ctx.axis_index({"y", "x"});
    sizes[p] = ctx.axis_size({"x", "y"});
  });
  EXPECT_EQ(ids, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(x, (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
  EXPECT_EQ(y, (std::vector<int>{0, 1, 0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(xy, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));   // jax: i*2+j
  EXPECT_EQ(yx, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));   // j*4+i
  EXPECT_EQ(sizes, std::vector<int>(8, 8));
}

TEST(RuntimeTest, MeshOverChosenDevices) {
  Runtime rt(8);
  const Mesh mesh(AbstractMesh({{"x", 4}}), {7, 5, 3, 1});
  std::vector<int> ids(4);
  rt.launch(mesh, [&](DeviceContext& ctx) { ids[ctx.position()] = ctx.device_id(); });
  EXPECT_EQ(ids, (std::vector<int>{7, 5, 3, 1}));
}

TEST(RuntimeTest, MeshLargerThanRuntimeIsAnError) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 8}}), [](DeviceContext&) {}), RuntimeUsageError,
               "uses device 4 but the runtime has at most 4 devices");
}

TEST(RuntimeTest, UnknownAxisNamesTheAxis) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) { ctx.axis_index("z"); }),
               AxisError, "'z'");
}

TEST(RuntimeTest, StdExceptionBecomesDeviceErrorWithDeviceId) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           if (ctx.device_id() == 3) throw std::runtime_error("boom");
                         }),
               DeviceError, "device 3: std::runtime_error: boom");
  try {
    rt.launch(Mesh::make({{"x", 4}}), [](DeviceContext& ctx) {
      if (ctx.device_id() == 2) throw std::out_of_range("index 9");
    });
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_EQ(e.device(), 2);
    EXPECT_STREQ(e.what(), "device 2: std::out_of_range: index 9");
    EXPECT_THROW(e.rethrow_original(), std::out_of_range);
  }
}

TEST(RuntimeTest, MeshsimErrorKeepsItsTypeAndGetsTheDevice) {
  Runtime rt(4);
  try {
    rt.launch(Mesh::make({{"x", 4}}), [](DeviceContext& ctx) {
      if (ctx.device_id() == 1) throw ShapeError("bad shape (3)");
    });
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.device(), 1);
    EXPECT_STREQ(e.what(), "device 1: bad shape (3)");
  }
}

// A device that fails while its peers wait in a collective releases them:
// the caller gets that device's error, not a hang and not a CancelledError.
// At 8 devices the group meets leaderless; at 17 and 64 it counts arrivals
// in blocks, which the failed launch leaves part-counted.
TEST(RuntimeTest, FailureReleasesPeersBlockedInARendezvous) {
  for (const int n : {8, 17, 64}) {
    Runtime rt(n);
    const Mesh mesh = Mesh::make({{"x", n}});
    for (int round = 0; round < 20; ++round) {
      EXPECT_ERROR(rt.launch(mesh,
                             [&](DeviceContext& ctx) {
                               if (ctx.device_id() == round % n) {
                                 throw InvalidArgumentError("late");
                               }
                               barrier(ctx, "x");
                             }),
                   InvalidArgumentError, "device " + std::to_string(round % n) + ": late");
    }
    // And the runtime (including that rendezvous) still works afterwards.
    for (int round = 0; round < 100; ++round) {
      std::atomic<int> passed{0};
      rt.launch(mesh, [&](DeviceContext& ctx) {
        barrier(ctx, "x");
        barrier(ctx, "x");
        passed.fetch_add(1);
      });
      ASSERT_EQ(passed.load(), n);
    }
  }
}

TEST(RuntimeTest, BarrierSeparatesPhases) {
  // Unique values, closed form: after the barrier every device sees all writes.
  Runtime rt(16);
  const Mesh mesh = Mesh::make({{"x", 16}});
  std::vector<int> written(16, 0);
  std::vector<long> sums(16, 0);
  for (int round = 1; round <= 50; ++round) {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      written[ctx.position()] = round * (ctx.position() + 1);
      barrier(ctx, "x");
      long sum = 0;
      for (int v : written) sum += v;
      sums[ctx.position()] = sum;
      barrier(ctx, "x");
    });
    EXPECT_EQ(sums, std::vector<long>(16, round * 16L * 17 / 2)) << "round " << round;
  }
}

TEST(RuntimeTest, MismatchedCallsNameBothDevices) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           GroupRef g = DeviceHooks::group(ctx, "x");
                           static const int64_t shape3[] = {3};
                           static const int64_t shape4[] = {4};
                           const CollectiveCall call(
                               "psum", DType::kFloat32, ctx.device_id() == 2 ? shape3 : shape4);
                           g.rendezvous->slot(g.rank).publish(call, nullptr, nullptr);
                           g.rendezvous->meet(g.rank, DeviceHooks::waiter(ctx));
                         }),
               CollectiveMismatchError,
               "device 0 called psum(float32(4)) but device 2 called psum(float32(3))");
}

TEST(RuntimeTest, ConcurrentLaunchesOnDisjointSubmeshes) {
  Runtime rt(8);
  const Mesh left(AbstractMesh({{"x", 4}}), {0, 1, 2, 3});
  const Mesh right(AbstractMesh({{"x", 4}}), {4, 5, 6, 7});
  std::atomic<int> left_runs{0}, right_runs{0};
  auto run = [&](const Mesh& mesh, std::atomic<int>& runs) {
    for (int i = 0; i < 200; ++i) {
      rt.launch(mesh, [&](DeviceContext& ctx) {
        barrier(ctx, "x");
        runs.fetch_add(1);
      });
    }
  };
  std::thread a(run, std::cref(left), std::ref(left_runs));
  std::thread b(run, std::cref(right), std::ref(right_runs));
  a.join();
  b.join();
  EXPECT_EQ(left_runs.load(), 800);
  EXPECT_EQ(right_runs.load(), 800);
}

TEST(RuntimeTest, OverlappingLaunchesRunOneAfterTheOther) {
  Runtime rt(4);
  const Mesh all = Mesh::make({{"x", 4}});
  const Mesh half(AbstractMesh({{"x", 2}}), {2, 3});
  std::atomic<int> inside{0}, max_inside{0};
  auto run = [&](const Mesh& mesh) {
    for (int i = 0; i < 100; ++i) {
      rt.launch(mesh, [&](DeviceContext& ctx) {
        if (ctx.device_id() != 2) return;  // device 2 is in both meshes
        const int now = inside.fetch_add(1) + 1;
        int seen = max_inside.load();
        while (now > seen && !max_inside.compare_exchange_weak(seen, now)) {
        }
        inside.fetch_sub(1);
      });
    }
  };
  std::thread a(run, std::cref(all));
  std::thread b(run, std::cref(half));
  a.join();
  b.join();
  EXPECT_EQ(max_inside.load(), 1);
}

TEST(RuntimeTest, SeveralRuntimesInOneProcess) {
  Runtime a(4), b(4);
  std::atomic<int> count{0};
  std::thread t([&] {
    for (int i = 0; i < 50; ++i) b.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
        barrier(ctx, "x");
        count.fetch_add(1);
      });
  });
  for (int i = 0; i < 50; ++i) a.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
      barrier(ctx, "x");
      count.fetch_add(1);
    });
  t.join();
  EXPECT_EQ(count.load(), 400);
}

TEST(RuntimeTest, ManyMoreDevicesThanCores) {
  Runtime rt(1024);
  const Mesh mesh = Mesh::make({{"x", 32}, {"y", 32}});
  std::vector<int> order(1024, 0);
  std::atomic<int> arrivals{0};
  rt.launch(mesh, [&](DeviceContext& ctx) {
    arrivals.fetch_add(1);
    barrier(ctx, {"x", "y"});
    order[ctx.position()] = arrivals.load();  // everyone arrived before anyone left
    barrier(ctx, "y");
  });
  EXPECT_EQ(order, std::vector<int>(1024, 1024));
}

TEST(RuntimeTest, DeadlockWhenDevicesMeetInDifferentOrders) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           // Device 0 goes to y first, everyone else to x first.
                           if (ctx.device_id() == 0) barrier(ctx, "y");
                           barrier(ctx, "x");
                           barrier(ctx, "y");
                         }),
               DeadlockError, "every device of the launch");
  // The report says where each device waits.
  try {
    rt.launch(mesh, [](DeviceContext& ctx) {
      if (ctx.device_id() != 3) barrier(ctx, {"x", "y"});
    });
    FAIL() << "expected DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr("device 3: finished"));
    EXPECT_THAT(what, ::testing::HasSubstr("devices 0–2: waiting in"));
  }
  // Still usable.
  std::atomic<int> n{0};
  rt.launch(mesh, [&](DeviceContext& ctx) {
    barrier(ctx, {"x", "y"});
    n.fetch_add(1);
  });
  EXPECT_EQ(n.load(), 4);
}

}  // namespace
}  // namespace meshsim::runtime_test

namespace meshsim::runtime_test {
namespace {

// A device stuck in its own code past the timeout: the launch fails with a
// report that tells the waiting devices from the busy one.
TEST(RuntimeTimeoutTest, ReportsWhereEveryDeviceIs) {
  Runtime rt(3, {.launch_timeout = std::chrono::milliseconds(100)});
  const Mesh mesh = Mesh::make({{"x", 3}});
  try {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      // A slow device: busy in its own code for 3x the timeout (the scenario
      // itself, not a way to let threads catch up).
      if (ctx.device_id() == 2) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      barrier(ctx, "x");
    });
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr("timed out after 100 ms"));
    EXPECT_THAT(what, ::testing::HasSubstr("devices 0, 1: waiting in"));
    EXPECT_THAT(what, ::testing::HasSubstr("device 2: running its own code"));
  } catch (...) {
    FAIL() << "unexpected exception";
  }
}

// A device whose body waits in a launch it made (here on another runtime,
// whose device is busy) is reported as waiting in it, not as running its
// own code.
TEST(RuntimeTimeoutTest, ReportsADeviceInsideALaunchFromItsBody) {
  Runtime rt(2, {.launch_timeout = std::chrono::milliseconds(100)});
  Runtime other(1);
  try {
    rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
      if (ctx.device_id() == 0) {
        other.launch(Mesh::make({{"y", 1}}), [](DeviceContext&) {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the scenario
        });
      }
      barrier(ctx, "x");
    });
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr("device 0: waiting in a launch from its body after 0 "
                                           "collectives"));
    EXPECT_THAT(what, ::testing::HasSubstr("device 1: waiting in"));
  }
}

// A body that joins a thread of its own whose launch wants the body's own
// devices: a cycle through user code nothing can see. The thread's launch
// waits for the devices no longer than the launch timeout, so its
// TimeoutError ends the thread, the body and then the outer launch.
TEST(RuntimeTimeoutTest, AHostLaunchWaitsForHeldDevicesNoLongerThanTheTimeout) {
  Runtime rt(2, {.launch_timeout = std::chrono::milliseconds(100)});
  const Mesh mesh = Mesh::make({{"x", 2}});
  std::string inner;
  // The outer launch times out too, unless the thread's wait, which may have
  // begun first, ended it within the outer's 100 ms: either way it returns.
  try {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      if (ctx.position() != 0) return;
      std::thread helper([&] {
        try {
          rt.launch(mesh, [](DeviceContext&) {});
        } catch (const TimeoutError& e) {
          inner = e.what();
        }
      });
      helper.join();
    });
  } catch (const TimeoutError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("launch on Mesh(x=2) timed out after 100 ms:"));
  }
  EXPECT_EQ(inner, "launch on Mesh(x=2) timed out after 100 ms waiting for device 0, which "
                   "another launch holds (RuntimeOptions::launch_timeout)");
  // Both let their devices go: the runtime runs the next launch.
  int ran = 0;
  rt.launch(mesh, [&](DeviceContext& ctx) {
    if (ctx.position() == 0) ++ran;
  });
  EXPECT_EQ(ran, 1);
}

// A device still in its own code after a launch timed out is reported at
// most once a second at first, whatever the timeout: a 1 ms timeout had
// logged a report per millisecond (170 for a 200 ms body).
TEST(RuntimeTimeoutTest, ABodyRunningPastTheTimeoutIsReportedOnceASecondAtMost) {
  Runtime rt(1, {.launch_timeout = std::chrono::milliseconds(1)});
  std::ostringstream log;
  rt.logger().sinks().push_back(std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  const auto reports = [&] {
    const std::string text = log.str();
    int count = 0;
    for (size_t at = 0; (at = text.find("still waiting for devices", at)) != std::string::npos;
         ++at) {
      ++count;
    }
    return count;
  };
  for (const int ms : {300, 1300}) {
    log.str("");
    EXPECT_ERROR(rt.launch(Mesh::make({{"x", 1}}),
                           [&](DeviceContext&) {
                             std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                           }),
                 TimeoutError, "timed out after 1 ms");
    EXPECT_EQ(reports(), ms / 1000) << ms << " ms";
  }
}

// A device that polls with yield() instead of waiting in meshsim: the
// timeout (or a peer's failure, below) cancels it at its next yield, so the
// launch ends instead of logging forever.
TEST(RuntimeTimeoutTest, ADevicePollingWithYieldStopsAtTheTimeout) {
  Runtime rt(1, {.launch_timeout = std::chrono::milliseconds(100)});
  std::string caught;
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 1}}),
                         [&](DeviceContext& ctx) {
                           try {
                             for (;;) ctx.yield();
                           } catch (const CancelledError& e) {
                             caught = e.what();
                             throw;
                           }
                         }),
               TimeoutError, "timed out after 100 ms");
  EXPECT_THAT(caught, ::testing::HasSubstr("DeviceContext::yield of device 0: the launch failed"));
}

// A device that caught its cancellation and goes on cannot meet again, in a
// leaderless group (4) or a counting one (12): as the last to arrive it would
// lead a meeting whose other members unwound. It gets a CancelledError at
// once, and the launch reports the first error.
TEST(RuntimeTest, ADeviceThatCaughtItsCancellationCannotMeetAgain) {
  for (const int n : {4, 12}) {
    Runtime rt(n);
    std::atomic<int> refused{0};
    EXPECT_ERROR(rt.launch(Mesh::make({{"x", n}}),
                           [&](DeviceContext& ctx) {
                             if (ctx.position() == 0) throw InvalidArgumentError("first");
                             try {
                               barrier(ctx, "x");
                             } catch (const CancelledError&) {
                               try {
                                 barrier(ctx, "x");
                               } catch (const CancelledError& e) {
                                 if (std::string(e.what()).find(
                                         "a meeting of axes 'x'") != std::string::npos) {
                                   refused.fetch_add(1);
                                 }
                               }
                             }
                           }),
                 InvalidArgumentError, "device 0: first");
    EXPECT_EQ(refused.load(), n - 1) << n;
  }
}

// The largest timeout is no timeout that fires at once (the deadline used
// to overflow the clock), and the warning's fraction must be one.
TEST(RuntimeTimeoutTest, ExtremeSettingsAreAcceptedOrRefused) {
  Runtime rt(2, {.launch_timeout = std::chrono::milliseconds::max()});
  int ran = 0;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    barrier(ctx, "x");
    if (ctx.position() == 0) ++ran;
  });
  EXPECT_EQ(ran, 1);
  for (const double bad : {0.0, -1.0, 1.5, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_ERROR(Runtime(1, {.launch_timeout = std::chrono::seconds(1), .warn_fraction = bad}),
                 InvalidArgumentError, "RuntimeOptions::warn_fraction must be in (0, 1]");
  }
  EXPECT_ERROR(Runtime(1, {.launch_timeout = std::chrono::milliseconds(-5)}),
               InvalidArgumentError,
               "RuntimeOptions::launch_timeout must be positive, or zero for none, got -5 ms");
  EXPECT_ERROR(Runtime(1, {.wait_policy = WaitPolicy{-100, 0}}), InvalidArgumentError,
               "RuntimeOptions::wait_policy budgets must be 0 to 1 s (WaitPolicy::kMaxBudgetNs), "
               "got spin_ns -100, yield_ns 0");
  EXPECT_ERROR(Runtime(1, {.wait_policy = WaitPolicy{0, -1}}), InvalidArgumentError,
               "yield_ns -1");
  // Past a second a waiter would hide a deadlock that long (and the clock
  // arithmetic of a budget near INT64_MAX overflows).
  EXPECT_ERROR(Runtime(1, {.wait_policy = WaitPolicy{std::numeric_limits<int64_t>::max(), 0}}),
               InvalidArgumentError, "got spin_ns 9223372036854775807, yield_ns 0");
  EXPECT_ERROR(Runtime(1, {.wait_policy = WaitPolicy{0, WaitPolicy::kMaxBudgetNs + 1}}),
               InvalidArgumentError, "yield_ns 1000000001");
  Runtime(1, {.wait_policy = WaitPolicy{WaitPolicy::kMaxBudgetNs, WaitPolicy::kMaxBudgetNs}});
  EXPECT_ERROR(Runtime(1, {.execution = static_cast<ExecutionMode>(7)}), InvalidArgumentError,
               "RuntimeOptions::execution must be ExecutionMode::kThreads or kFibers, got 7");
  {
    const testing_support::ScopedEnv typo("MESHSIM_LOG_LEVEL", "warnings");
    EXPECT_ERROR(Runtime(1), InvalidArgumentError,
                 "environment variable MESHSIM_LOG_LEVEL: 'warnings' is not one of trace, debug, "
                 "info, warn, error, critical, off");
  }
  {
    const testing_support::ScopedEnv off("MESHSIM_LOG_LEVEL", "off");
    EXPECT_EQ(Runtime(1).logger().level(), spdlog::level::off);
  }
  {
    const testing_support::ScopedEnv info("MESHSIM_LOG_LEVEL", "info");
    EXPECT_EQ(Runtime(1).logger().level(), spdlog::level::info);
  }
  // A device table of 2^31 entries would take 16 GiB before any device ran.
  EXPECT_ERROR(Runtime(RuntimeOptions{.max_devices = std::numeric_limits<int>::max()}),
               InvalidArgumentError, "RuntimeOptions::max_devices must be 1 to 4194304, got 2147483647");
}

TEST(RuntimeTest, ADevicePollingWithYieldStopsWhenAPeerFails) {
  Runtime rt(2);
  std::atomic<bool> never{false};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           if (ctx.position() == 0) throw std::runtime_error("boom");
                           while (!never.load()) ctx.yield();
                         }),
               DeviceError, "boom");
}

TEST(RuntimeTest, DestroyingWhileALaunchRunsWaitsForIt) {
  std::atomic<bool> started{false}, finish{false};
  std::atomic<int> ran{0};
  auto rt = std::make_unique<Runtime>(2);
  std::thread host([&] {
    rt->launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
      started.store(true);
      while (!finish.load()) ctx.yield();  // lets a fiber worker run its other devices
      barrier(ctx, "x");
      ran.fetch_add(1);
    });
  });
  while (!started.load()) std::this_thread::yield();
  std::thread destroyer([&] { rt.reset(); });
  finish.store(true);
  destroyer.join();
  host.join();
  EXPECT_EQ(ran.load(), 2);
}

// A device body of another runtime destroys b while a launch on b runs from a
// sibling device of the same fiber worker: the destructor's wait must park
// that fiber, not block the worker the sibling needs to return from its launch.
TEST(RuntimeTest, DestroyingFromAFiberOfAnotherRuntimeLetsItsWorkerRun) {
  RuntimeOptions one_worker;
  one_worker.execution = ExecutionMode::kFibers;
  one_worker.fiber_workers = 1;
  Runtime a(2, one_worker);
  RuntimeOptions fibers;
  fibers.execution = ExecutionMode::kFibers;
  auto b = std::make_unique<Runtime>(2, fibers);
  std::atomic<bool> started{false}, destroying{false};
  std::atomic<int> ran{0};
  a.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.position() == 0) {
      b->launch(Mesh::make({{"y", 2}}), [&](DeviceContext& c) {
        started.store(true);
        // b's launch ends only once position 0 runs again, after this.
        while (!destroying.load()) c.yield();
        barrier(c, "y");
        ran.fetch_add(1);
      });
    } else {
      while (!started.load()) ctx.yield();
      destroying.store(true);
      b.reset();
    }
  });
  EXPECT_EQ(b, nullptr);
  EXPECT_EQ(ran.load(), 2);
}

// A device body of a destroys b while b's launch (from a host thread) has a
// body that launches on a's device 0, which a's launch holds: the destructor
// waits for b's launch, which waits for the destructor's. The claim gives up
// with a DeadlockError naming the cycle; b's launch fails, the destructor
// returns, and a's launch ends.
TEST(RuntimeTest, DestroyingARuntimeWhoseLaunchWaitsForTheDestroyersDeviceBreaksTheCycle) {
  Runtime a(2);
  auto b = std::make_unique<Runtime>(2);
  std::atomic<bool> a_holds{false};
  std::string caught;
  std::thread host([&] {
    try {
      b->launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
        if (ctx.position() != 0) return;
        while (!a_holds.load()) ctx.yield();
        a.launch(Mesh::make({{"y", 1}}), [](DeviceContext&) {});  // wants a's device 0
      });
    } catch (const DeadlockError& e) {
      caught = e.what();
    }
  });
  int destroyed = 0;
  a.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.position() != 0) return;
    a_holds.store(true);
    while (ClaimWaits::process().size() == 0) ctx.yield();  // b's body waits for device 0
    b.reset();
    ++destroyed;
  });
  host.join();
  EXPECT_EQ(destroyed, 1);
  EXPECT_THAT(caught, ::testing::HasSubstr(
                          "launch on Mesh(y=1) from the body of device 0 would wait forever, in a "
                          "cycle of launches that wait for each other's devices: device 0 (in the "
                          "launch on Mesh(x=2)) waits for device 0 of another runtime, held by the "
                          "launch on Mesh(x=2); device 0 of another runtime (in the launch on "
                          "Mesh(x=2)) waits in the destructor of this runtime for the launch on "
                          "Mesh(x=2) to end"));
}

}  // namespace
}  // namespace meshsim::runtime_test

namespace meshsim::runtime_test {
namespace {

TEST(RuntimeTest, ContextUsedFromAnotherThreadIsAnError) {
  Runtime rt(2);
  rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    if (ctx.device_id() != 0) return;
    std::exception_ptr error;
    std::thread other([&] {
      try {
        DeviceHooks::group(ctx, "x");
      } catch (...) {
        error = std::current_exception();
      }
    });
    other.join();
    EXPECT_ERROR(std::rethrow_exception(error), RuntimeUsageError,
                 "called outside that device's launch");
  });
}

}  // namespace
}  // namespace meshsim::runtime_test
