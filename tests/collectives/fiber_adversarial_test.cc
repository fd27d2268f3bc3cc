// Fiber execution mode attacked through the public API, as a hostile or
// careless user would: exceptions across parks, failures while peers wait in
// every kind of collective, mismatches and deadlocks on one worker, contexts
// used where they must not be, nested and cross-runtime launches, concurrent
// host threads, extreme settings and many short launches. Every test asserts
// a documented outcome (an Error subtype and a message naming the fault, or a
// closed-form result); every Runtime has a launch timeout so a bug fails
// instead of hanging.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::fiber_adversarial_test {
namespace {

using namespace std::chrono_literals;
using Pairs = std::vector<std::pair<int, int>>;

RuntimeOptions fib(int workers, std::chrono::milliseconds timeout = 20s) {
  RuntimeOptions options;
  options.execution = ExecutionMode::kFibers;
  options.fiber_workers = workers;
  options.launch_timeout = timeout;
  return options;
}

Array f1(float v) { return Array::full({1}, DType::kFloat32, v); }
float only(const Array& a) { return a.span<float>()[0]; }

Pairs ring(int n, int shift) {
  Pairs p;
  for (int i = 0; i < n; ++i) p.emplace_back(i, (i + shift) % n);
  return p;
}

// ---------------------------------------------------------------------------
// Exceptions across parks.

// Three nested catch blocks, a park at each level, on one worker: every fiber
// must see its own exceptions at every level (rethrow, current_exception,
// uncaught_exceptions), though the others' handlers run in between.
TEST(FiberAdversarialTest, NestedCatchBlocksAcrossParksKeepEachFibersExceptions) {
  constexpr int n = 6;
  Runtime rt(n, fib(1));
  std::vector<std::string> seen(n);
  std::vector<int> wrong(n, 0);
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    const int d = ctx.device_id();
    const std::string me = std::to_string(d);
    try {
      throw std::runtime_error("outer " + me);
    } catch (const std::runtime_error&) {
      if (only(psum(ctx, f1(1), "x")) != n) ++wrong[d];
      try {
        throw std::logic_error("middle " + me);
      } catch (const std::logic_error&) {
        barrier(ctx, "x");
        try {
          throw std::out_of_range("inner " + me);
        } catch (const std::out_of_range&) {
          (void)all_gather(ctx, f1(d), "x");
          if (std::uncaught_exceptions() != 0) ++wrong[d];
          try {
            throw;
          } catch (const std::out_of_range& e) {
            seen[d] += e.what();
          }
        }
        (void)ppermute(ctx, f1(d), "x", ring(n, 1));
        try {
          std::rethrow_exception(std::current_exception());
        } catch (const std::logic_error& e) {
          seen[d] += std::string("|") + e.what();
        }
      }
      ctx.yield();
      try {
        throw;
      } catch (const std::runtime_error& e) {
        seen[d] += std::string("|") + e.what();
      }
    }
    if (std::current_exception() != nullptr) ++wrong[d];
  });
  for (int d = 0; d < n; ++d) {
    const std::string me = std::to_string(d);
    EXPECT_EQ(seen[d], "inner " + me + "|middle " + me + "|outer " + me) << "device " << d;
  }
  EXPECT_EQ(wrong, std::vector<int>(n, 0));
}

// A destructor that parks while its exception unwinds: each fiber counts one
// exception in flight before and after the park, whatever the others do
// meanwhile (some are unwinding too, some are catching).
struct ParkingGuard {
  DeviceContext& ctx;
  int* before;
  int* after;
  ~ParkingGuard() {
    *before = std::uncaught_exceptions();
    for (int i = 0; i < 5; ++i) ctx.yield();
    *after = std::uncaught_exceptions();
  }
};

TEST(FiberAdversarialTest, ADestructorParkingDuringUnwindKeepsItsUncaughtCount) {
  constexpr int n = 4;
  Runtime rt(n, fib(1));
  std::vector<int> before(n, -1), after(n, -1), caught_by(n, -1);
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    const int d = ctx.device_id();
    try {
      ParkingGuard guard{ctx, &before[d], &after[d]};
      throw d;
    } catch (int who) {
      caught_by[d] = who;
    }
    barrier(ctx, "x");
  });
  for (int d = 0; d < n; ++d) {
    EXPECT_EQ(before[d], 1) << "device " << d;
    EXPECT_EQ(after[d], 1) << "device " << d;
    EXPECT_EQ(caught_by[d], d);
  }
}

// A device throws a new exception from the innermost of nested handlers,
// after parking there; the others wait in a psum inside their own handlers.
TEST(FiberAdversarialTest, AThrowFromDeepInsideNestedHandlersFailsTheLaunch) {
  Runtime rt(5, fib(1));
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 5}}),
                         [&](DeviceContext& ctx) {
                           try {
                             throw std::runtime_error("a");
                           } catch (...) {
                             try {
                               throw std::runtime_error("b");
                             } catch (...) {
                               barrier(ctx, "x");
                               if (ctx.device_id() == 3) throw std::domain_error("deep 3");
                               (void)psum(ctx, f1(1), "x");
                             }
                           }
                         }),
               DeviceError, "device 3: std::domain_error: deep 3");
  // Not derived from std::exception.
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 5}}),
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() == 4) throw 42;
                           barrier(ctx, "x");
                         }),
               DeviceError, "device 4: int (not derived from std::exception)");
  // Then the runtime works.
  std::atomic<int> wrong{0};
  rt.launch(Mesh::make({{"x", 5}}), [&](DeviceContext& ctx) {
    if (only(psum(ctx, f1(ctx.device_id()), "x")) != 10.0f) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

// ---------------------------------------------------------------------------
// One device fails while the others wait in each kind of collective.

struct WaitKind {
  const char* name;
  std::function<void(DeviceContext&)> wait;          // what the survivors do
  std::function<bool(DeviceContext&, int n)> check;  // a healthy run's answer is right
};

std::vector<WaitKind> wait_kinds() {
  return {
      {"psum", [](DeviceContext& c) { (void)psum(c, f1(1), "x"); },
       [](DeviceContext& c, int n) { return only(psum(c, f1(c.device_id()), "x")) == n * (n - 1) / 2; }},
      {"all_gather", [](DeviceContext& c) { (void)all_gather(c, f1(1), "x"); },
       [](DeviceContext& c, int n) {
         const Array a = all_gather(c, f1(c.device_id()), "x", AllGatherOptions{.tiled = true});
         for (int i = 0; i < n; ++i) {
           if (a.span<float>()[i] != i) return false;
         }
         return true;
       }},
      {"ppermute", [](DeviceContext& c) { (void)ppermute(c, f1(1), "x", ring(c.axis_size("x"), 1)); },
       [](DeviceContext& c, int n) {
         return only(ppermute(c, f1(c.device_id()), "x", ring(n, 1))) == (c.device_id() + n - 1) % n;
       }},
      {"precv", [](DeviceContext& c) {
         // Everyone receives from device 0 (the one that fails).
         Pairs perm;
         for (int i = 1; i < c.axis_size("x"); ++i) perm.emplace_back(0, i);
         if (c.device_id() != 0) (void)precv(c, {}, {1}, DType::kFloat32, "x", perm);
       },
       [](DeviceContext& c, int n) {
         const Pairs perm = ring(n, 1);
         psend(c, f1(c.device_id() * 10), "x", perm);
         return only(precv(c, {}, {1}, DType::kFloat32, "x", perm)) == ((c.device_id() + n - 1) % n) * 10;
       }},
      {"psend", [](DeviceContext& c) {
         // Fills the link to device 0 (which never receives) until it blocks.
         const Pairs perm = {{c.axis_index("x"), 0}};
         for (int i = 0; i < 64; ++i) psend(c, f1(i), "x", perm);
       },
       [](DeviceContext& c, int n) {
         // 3 messages along the ring, received in order.
         const Pairs perm = ring(n, 1);
         for (int i = 0; i < 3; ++i) psend(c, f1(i), "x", perm);
         for (int i = 0; i < 3; ++i) {
           if (only(precv(c, {}, {1}, DType::kFloat32, "x", perm)) != i) return false;
         }
         return true;
       }},
      {"all_to_all", [](DeviceContext& c) {
         (void)all_to_all(c, Array::zeros({c.axis_size("x")}, DType::kFloat32), "x", 0, 0,
                          AllToAllOptions{.tiled = true});
       },
       [](DeviceContext& c, int n) {
         // Device d sends d*100 + j to device j; device d receives i*100 + d from i.
         std::vector<float> v(n);
         for (int j = 0; j < n; ++j) v[j] = c.device_id() * 100 + j;
         const Array r = all_to_all(c, Array::from_values<float>({n}, v), "x", 0, 0,
                                    AllToAllOptions{.tiled = true});
         for (int i = 0; i < n; ++i) {
           if (r.span<float>()[i] != i * 100 + c.device_id()) return false;
         }
         return true;
       }},
      {"barrier", [](DeviceContext& c) { barrier(c, "x"); },
       [](DeviceContext& c, int) {
         barrier(c, "x");
         return true;
       }},
      {"psum_start", [](DeviceContext& c) {
         Pending a = psum_start(c, f1(1), "x");
         Pending b = all_gather_start(c, f1(1), "x");
         (void)a.done();
         (void)b.done();
       },
       [](DeviceContext& c, int n) {
         Pending a = psum_start(c, f1(1), "x");
         Pending b = ppermute_start(c, f1(c.device_id()), "x", ring(n, 1));
         Pending g = all_gather_start(c, f1(c.device_id()), "x", AllGatherOptions{.tiled = true});
         const float pb = only(b.done());
         const Array ga = g.done();
         return only(a.done()) == n && pb == (c.device_id() + n - 1) % n &&
                ga.span<float>()[n - 1] == n - 1;
       }},
  };
}

TEST(FiberAdversarialTest, ADeviceFailingWhileOthersWaitInEachCollective) {
  constexpr int n = 8;
  for (int workers : {1, 3}) {
    Runtime rt(n, fib(workers));
    const Mesh mesh = Mesh::make({{"x", n}});
    for (const WaitKind& kind : wait_kinds()) {
      SCOPED_TRACE(std::string(kind.name) + " on " + std::to_string(workers) + " worker(s)");
      std::atomic<int> entering{0};
      const std::string message = std::string("boom while the others wait in ") + kind.name;
      EXPECT_ERROR(rt.launch(mesh,
                             [&](DeviceContext& ctx) {
                               if (ctx.device_id() == 0) {
                                 // Let the others get into their wait first.
                                 while (entering.load() < n - 1) ctx.yield();
                                 for (int i = 0; i < 100; ++i) ctx.yield();
                                 throw std::runtime_error(message);
                               }
                               entering.fetch_add(1);
                               kind.wait(ctx);
                             }),
                   DeviceError, "device 0: std::runtime_error: " + message);
      // The runtime stays usable and right.
      std::atomic<int> wrong{0};
      rt.launch(mesh, [&](DeviceContext& ctx) {
        if (!kind.check(ctx, n)) wrong.fetch_add(1);
      });
      EXPECT_EQ(wrong.load(), 0);
    }
  }
}

// ---------------------------------------------------------------------------
// Mismatches and deadlocks with one worker and many devices.

TEST(FiberAdversarialTest, MismatchesOnOneWorkerWithManyDevices) {
  Runtime rt(64, fib(1));
  // A checkerboard: devices with x+y even reduce over x, the others over y,
  // so every group (row or column) has members waiting in another group.
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 8}, {"y", 8}}),
                         [](DeviceContext& ctx) {
                           (void)psum(ctx, f1(1), (ctx.axis_index("x") + ctx.axis_index("y")) % 2 == 0 ? "x" : "y");
                         }),
               CollectiveMismatchError, "collective mismatch: device");
  // One device of 64 reduces a different shape.
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 64}}),
                         [](DeviceContext& ctx) {
                           (void)psum(ctx, Array::full({ctx.device_id() == 17 ? 2 : 1}, DType::kFloat32, 1.0),
                                      "x");
                         }),
               CollectiveMismatchError, "device 17 called psum(float32(2))");
  // Then a healthy launch on the same groups.
  std::atomic<int> wrong{0};
  rt.launch(Mesh::make({{"x", 8}, {"y", 8}}), [&](DeviceContext& ctx) {
    if (only(psum(ctx, f1(1), "y")) != 8.0f) wrong.fetch_add(1);
    if (only(psum(ctx, f1(1), {"x", "y"})) != 64.0f) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(FiberAdversarialTest, DeadlocksOnOneWorkerWithManyDevices) {
  constexpr int n = 256;
  Runtime rt(n, fib(1));
  const Mesh mesh = Mesh::make({{"x", n}});
  // The last device leaves; the rest wait for it in a barrier.
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           if (ctx.device_id() != n - 1) barrier(ctx, "x");
                         }),
               DeadlockError, "device 255: finished");
  // Everyone receives before sending, around a ring.
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           const Pairs perm = ring(n, 1);
                           (void)precv(ctx, {}, {1}, DType::kFloat32, "x", perm);
                           psend(ctx, f1(1), "x", perm);
                         }),
               DeadlockError, "waiting in precv");
  // A psend whose receiver has left blocks once the link is full.
  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
                         [](DeviceContext& ctx) {
                           if (ctx.device_id() != 0) return;
                           for (int i = 0; i < 64; ++i) psend(ctx, f1(i), "x", {{0, 1}});
                         }),
               DeadlockError, "device 0: waiting in psend");
  // Async starts issued in different orders: a deadlock or a mismatch, never a hang.
  bool failed_right = false;
  try {
    rt.launch(Mesh::make({{"x", 4}}), [](DeviceContext& ctx) {
      if (ctx.device_id() == 0) {
        Pending a = all_gather_start(ctx, f1(1), "x");
        Pending b = psum_start(ctx, f1(1), "x");
        (void)a.done();
        (void)b.done();
      } else {
        Pending b = psum_start(ctx, f1(1), "x");
        Pending a = all_gather_start(ctx, f1(1), "x");
        (void)a.done();
        (void)b.done();
      }
    });
  } catch (const CollectiveMismatchError& e) {
    failed_right = std::string(e.what()).find("all_gather") != std::string::npos;
  } catch (const DeadlockError&) {
    failed_right = true;
  }
  EXPECT_TRUE(failed_right);
  // Healthy afterwards.
  std::atomic<int> wrong{0};
  rt.launch(mesh, [&](DeviceContext& ctx) {
    if (only(psum(ctx, f1(1), "x")) != n) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

// A receiver whose sender sends the wrong shape or dtype.
TEST(FiberAdversarialTest, PrecvOfTheWrongShapeOrDtypeNamesBothDevices) {
  Runtime rt(2, fib(1));
  const Mesh mesh = Mesh::make({{"x", 2}});
  const Pairs perm = {{0, 1}};
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           psend(ctx, Array::zeros({3}, DType::kFloat32), "x", perm);
                           (void)precv(ctx, {}, {2}, DType::kFloat32, "x", perm);
                         }),
               CollectiveShapeError, "(device 0) sent float32(3)");
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           psend(ctx, Array::zeros({2}, DType::kInt32), "x", perm);
                           (void)precv(ctx, {}, {2}, DType::kFloat32, "x", perm);
                         }),
               DTypeError, "expected float32(2) but axis index 0 (device 0) sent int32(2)");
}

// A device that never yields while it waits for a peer on its worker: the
// documented user error; the timeout reports the peer as not started.
TEST(FiberAdversarialTest, ASpinWithoutYieldTimesOutAndReportsThePeerNotStarted) {
  Runtime rt(2, fib(1, 300ms));
  std::atomic<int> started{0};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext&) {
                           started.fetch_add(1);
                           const auto until = std::chrono::steady_clock::now() + 1500ms;
                           while (started.load() < 2 && std::chrono::steady_clock::now() < until) {
                           }
                         }),
               TimeoutError, "not started");
  EXPECT_EQ(started.load(), 2);  // the launch returned after both ran
}

// ---------------------------------------------------------------------------
// Contexts used where they must not be.

TEST(FiberAdversarialTest, AContextAfterItsLaunchIsRefusedIncludingYield) {
  Runtime rt(3, fib(1));
  DeviceContext* kept = nullptr;
  rt.launch(Mesh::make({{"x", 3}}), [&](DeviceContext& ctx) {
    if (ctx.device_id() == 1) kept = &ctx;
    barrier(ctx, "x");
  });
  ASSERT_NE(kept, nullptr);
  EXPECT_ERROR(kept->yield(), RuntimeUsageError,
               "DeviceContext::yield of device 1 called outside that device's launch");
  EXPECT_ERROR((void)kept->device_id(), RuntimeUsageError, "device_id of device 1");
  EXPECT_ERROR((void)psum(*kept, f1(1), "x"), RuntimeUsageError, "of device 1 called outside");
  EXPECT_ERROR((void)kept->collective_records(), RuntimeUsageError, "of device 1");
  // The next launch on that device gets the same object back, usable.
  int id = -1;
  rt.launch(Mesh(AbstractMesh({{"y", 1}}), {1}), [&](DeviceContext& ctx) {
    if (&ctx == kept) id = kept->device_id();
  });
  EXPECT_EQ(id, 1);
}

// While the launch runs: a host thread, a thread the body starts, and another
// device on the same worker all touch device 0's context; each is refused.
// Device 0 itself still uses it afterwards.
TEST(FiberAdversarialTest, AContextFromAHostThreadASpawnedThreadOrAnotherDeviceIsRefused) {
  Runtime rt(2, fib(1));
  std::atomic<DeviceContext*> zero{nullptr};
  std::atomic<bool> host_done{false};
  std::atomic<int> refusals{0};
  std::string spawned_message;
  int own_id = -1;
  std::thread host([&] {
    while (zero.load() == nullptr) std::this_thread::yield();
    try {
      (void)zero.load()->position();
    } catch (const RuntimeUsageError& e) {
      if (std::string(e.what()).find("position of device 0") != std::string::npos) refusals.fetch_add(1);
    }
    host_done = true;
  });
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.device_id() == 0) {
      zero = &ctx;
      while (!host_done.load()) ctx.yield();
      std::thread spawned([&] {
        try {
          ctx.yield();
        } catch (const RuntimeUsageError& e) {
          spawned_message = e.what();
        }
      });
      spawned.join();  // blocks the worker briefly; nothing else waits on it
      barrier(ctx, "x");
      own_id = ctx.device_id();
    } else {
      while (zero.load() == nullptr) ctx.yield();
      try {
        (void)zero.load()->axis_index("x");
      } catch (const RuntimeUsageError&) {
        refusals.fetch_add(1);
      }
      barrier(ctx, "x");
    }
  });
  host.join();
  EXPECT_EQ(refusals.load(), 2);
  EXPECT_THAT(spawned_message, ::testing::HasSubstr("DeviceContext::yield of device 0 called outside"));
  EXPECT_EQ(own_id, 0);
}

// A nested launch's devices run on the parked outer device's worker; they
// must not be able to use the outer context, and the outer context must work
// again once the nested launch returns.
TEST(FiberAdversarialTest, AnOuterContextIsRefusedInsideANestedLaunchAndWorksAfterIt) {
  Runtime rt(4, fib(1));
  std::atomic<int> refused{0};
  int after = -1;
  rt.launch(Mesh(AbstractMesh({{"x", 1}}), {0}), [&](DeviceContext& outer) {
    rt.launch(Mesh(AbstractMesh({{"y", 3}}), {1, 2, 3}), [&](DeviceContext& inner) {
      try {
        outer.yield();
      } catch (const RuntimeUsageError&) {
        refused.fetch_add(1);
      }
      barrier(inner, "y");
    });
    after = outer.device_id() + outer.axis_size("x") * 10;
  });
  EXPECT_EQ(refused.load(), 3);
  EXPECT_EQ(after, 10);
}

// ---------------------------------------------------------------------------
// Nested launches.

// Three levels of nesting on one worker, with shard_map and pmap in the
// middle; and a nested launch on a device an enclosing launch (two levels
// up) holds is a RuntimeUsageError, not a hang.
TEST(FiberAdversarialTest, DeepNestingWithShardMapAndPmapOnDisjointDevices) {
  Runtime rt(12, fib(1));
  std::vector<float> results(2, 0);
  std::atomic<int> leaf_sum{0};
  rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    // shard_map on {2+2p, 3+2p}: psum of [1, 2+p] = 3+p.
    const Array total = shard_map(
        rt, Mesh(AbstractMesh({{"i", 2}}), {2 + 2 * p, 3 + 2 * p}),
        [&](DeviceContext& c, const Array& s) {
          // Third level: the first member launches on {6+p} alone.
          if (c.position() == 0) {
            rt.launch(Mesh(AbstractMesh({{"z", 1}}), {6 + p}), [&](DeviceContext& leaf) {
              leaf_sum.fetch_add(leaf.device_id());
            });
          }
          return psum(c, s, "i");
        },
        P{"i"}, P{}, Array::from_values<float>({2}, {1.0f, 2.0f + static_cast<float>(p)}));
    // pmap on {8+2p, 9+2p}: each adds its axis index to its input row.
    PmapOptions options;
    options.devices = {8 + 2 * p, 9 + 2 * p};
    const std::vector<Array> mapped = pmap(
        rt, [](DeviceContext& c, std::span<const Array> in) { return psum(c, in[0], "d"); }, "d",
        {Array::from_values<float>({2, 1}, {10.0f, 20.0f})}, options);
    results[p] = only(total) + mapped[0].span<float>()[0];
  });
  EXPECT_EQ(results, (std::vector<float>{3.0f + 30.0f, 4.0f + 30.0f}));
  EXPECT_EQ(leaf_sum.load(), 6 + 7);

  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
                         [&](DeviceContext& ctx) {
                           if (ctx.position() != 0) return;
                           rt.launch(Mesh(AbstractMesh({{"y", 2}}), {2, 3}), [&](DeviceContext& mid) {
                             if (mid.position() != 0) return;
                             rt.launch(Mesh(AbstractMesh({{"z", 1}}), {1}), [](DeviceContext&) {});
                           });
                         }),
               RuntimeUsageError, "would wait forever");
  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
                         [&](DeviceContext& ctx) {
                           if (ctx.position() != 1) return;
                           (void)pmap(rt, [](DeviceContext&, std::span<const Array> in) { return in[0]; },
                                      "d", {Array::zeros({2, 1}, DType::kFloat32)});
                         }),
               RuntimeUsageError, "would wait forever");
}

// A nested launch that deadlocks fails its caller; the outer launch reports it.
TEST(FiberAdversarialTest, ADeadlockInANestedLaunchFailsTheOuterLaunch) {
  Runtime rt(4, fib(1));
  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
                         [&](DeviceContext& ctx) {
                           if (ctx.position() == 0) {
                             rt.launch(Mesh(AbstractMesh({{"y", 2}}), {2, 3}), [](DeviceContext& c) {
                               if (c.device_id() == 3) (void)psum(c, f1(1), "y");
                             });
                           }
                           barrier(ctx, "x");
                         }),
               DeadlockError, "device 3: waiting in psum");
  std::atomic<int> wrong{0};
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    if (only(psum(ctx, f1(ctx.device_id()), "x")) != 6.0f) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
}

// An outer device fails while its peer is parked in a nested launch that is
// still running: the outer launch waits for the nested one, then reports the
// failure. A nested launch naming a device the runtime does not have is a
// RuntimeUsageError inside the body, reported with the calling device.
TEST(FiberAdversarialTest, FailuresAroundANestedLaunchInProgress) {
  Runtime rt(4, fib(1));
  std::atomic<bool> thrown{false};
  std::atomic<int> inner_done{0};
  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
                         [&](DeviceContext& ctx) {
                           if (ctx.position() == 0) {
                             rt.launch(Mesh(AbstractMesh({{"y", 2}}), {2, 3}), [&](DeviceContext& c) {
                               while (!thrown.load()) c.yield();
                               barrier(c, "y");
                               inner_done.fetch_add(1);
                             });
                           } else {
                             thrown = true;
                             throw std::invalid_argument("outer peer fails");
                           }
                         }),
               DeviceError, "device 1: std::invalid_argument: outer peer fails");
  EXPECT_EQ(inner_done.load(), 2);
  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 1}}), {0}),
                         [&](DeviceContext&) {
                           rt.launch(Mesh(AbstractMesh({{"y", 2}}), {3, 9}), [](DeviceContext&) {});
                         }),
               RuntimeUsageError, "uses device 9 but the runtime has at most 4 devices");
}

// A fiber runtime and a thread runtime launching into each other, two deep.
TEST(FiberAdversarialTest, FiberAndThreadRuntimesLaunchIntoEachOther) {
  Runtime fibers(4, fib(1));
  RuntimeOptions thread_options;
  thread_options.execution = ExecutionMode::kThreads;
  thread_options.launch_timeout = 20s;
  Runtime threads(4, thread_options);
  std::atomic<int> innermost{0}, middle{0};
  fibers.launch(Mesh(AbstractMesh({{"a", 2}}), {0, 1}), [&](DeviceContext& f) {
    const int p = f.position();
    threads.launch(Mesh(AbstractMesh({{"b", 2}}), {2 * p, 2 * p + 1}), [&](DeviceContext& t) {
      if (t.position() == 0) {
        fibers.launch(Mesh(AbstractMesh({{"c", 1}}), {2 + p}), [&](DeviceContext& g) {
          innermost.fetch_add(static_cast<int>(only(psum(g, f1(g.device_id()), "c"))));
        });
      }
      middle.fetch_add(static_cast<int>(only(psum(t, f1(t.device_id()), "b"))));
    });
    barrier(f, "a");
  });
  EXPECT_EQ(innermost.load(), 2 + 3);
  EXPECT_EQ(middle.load(), 2 * (0 + 1) + 2 * (2 + 3));
  // The other way: a thread-mode body launches fibers.
  std::atomic<int> sum{0};
  threads.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& t) {
    if (t.device_id() != 1) return;
    fibers.launch(Mesh::make({{"y", 4}}), [&](DeviceContext& g) {
      const float s = only(psum(g, f1(g.device_id()), "y"));
      if (g.device_id() == 0) sum = static_cast<int>(s);
    });
  });
  EXPECT_EQ(sum.load(), 6);
}

// A launch back into the fiber runtime, through a thread runtime, on a device
// the outermost fiber launch holds: the enclosing launch is in another
// runtime's body, so this must still be a RuntimeUsageError, not a wait.
// fibers{0} -> threads{0} -> fibers{0}: the chain of enclosing launches
// crosses runtimes, and the innermost launch would wait for device 0 forever.
// (This hung, in both modes, until the nested-launch check followed the chain
// through the other runtime.)
TEST(FiberAdversarialTest, ACycleThroughAnotherRuntimeOntoAHeldDeviceIsAnError) {
  Runtime fibers(2, fib(1, 3s));
  RuntimeOptions thread_options;
  thread_options.execution = ExecutionMode::kThreads;
  thread_options.launch_timeout = 3s;
  Runtime threads(1, thread_options);
  EXPECT_ERROR(fibers.launch(Mesh(AbstractMesh({{"a", 1}}), {0}),
                             [&](DeviceContext&) {
                               threads.launch(Mesh::make({{"b", 1}}), [&](DeviceContext&) {
                                 fibers.launch(Mesh(AbstractMesh({{"c", 1}}), {0}), [](DeviceContext&) {});
                               });
                             }),
               RuntimeUsageError, "would wait forever");
}

// ---------------------------------------------------------------------------
// Concurrency from host threads, lifetime, settings and volume.

// Four host threads launch on overlapping meshes of one fiber runtime: the
// launches that share a device serialize (no device ever runs two bodies at
// once) and every result is right.
TEST(FiberAdversarialTest, HostThreadsLaunchingOnOverlappingMeshesSerializeAndAreRight) {
  constexpr int kThreads = 4, kRounds = 60;
  Runtime rt(8, fib(2));
  std::vector<std::atomic<int>> busy(8);
  std::atomic<int> overlaps{0}, wrong{0};
  auto host = [&](int t) {
    const std::vector<int> ids = {t, t + 1, t + 2, t + 3};
    const Mesh mesh(AbstractMesh({{"x", 4}}), ids);
    for (int r = 0; r < kRounds; ++r) {
      rt.launch(mesh, [&](DeviceContext& ctx) {
        if (busy[ctx.device_id()].fetch_add(1) != 0) overlaps.fetch_add(1);
        const float s = only(psum(ctx, f1(ctx.device_id() + r), "x"));
        if (s != 4 * t + 6 + 4 * r) wrong.fetch_add(1);
        const Array g = all_gather(ctx, f1(ctx.device_id()), "x", AllGatherOptions{.tiled = true});
        for (int i = 0; i < 4; ++i) {
          if (g.span<float>()[i] != t + i) wrong.fetch_add(1);
        }
        busy[ctx.device_id()].fetch_sub(1);
      });
    }
  };
  std::vector<std::thread> hosts;
  for (int t = 0; t < kThreads; ++t) hosts.emplace_back(host, t);
  for (std::thread& h : hosts) h.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

// Fiber runtimes created, used (and failed) and destroyed at once, many times.
TEST(FiberAdversarialTest, DestroyingAFiberRuntimeRightAfterLaunches) {
  for (int i = 0; i < 40; ++i) {
    Runtime rt(8, fib(1 + i % 3));
    std::atomic<int> sum{0};
    rt.launch(Mesh::make({{"x", 8}}), [&](DeviceContext& ctx) {
      if (ctx.device_id() == 0) sum = static_cast<int>(only(psum(ctx, f1(i), "x")));
      else (void)psum(ctx, f1(i), "x");
    });
    ASSERT_EQ(sum.load(), 8 * i);
    if (i % 4 == 0) {
      EXPECT_ERROR(rt.launch(Mesh::make({{"x", 8}}),
                             [](DeviceContext& ctx) {
                               if (ctx.device_id() != 5) barrier(ctx, "x");
                             }),
                   DeadlockError, "device 5: finished");
    }
  }
  // And one never launched on.
  { Runtime idle(4, fib(2)); }
}

// More workers than devices: the extra workers have nothing to run.
TEST(FiberAdversarialTest, SixteenWorkersForTwoDevices) {
  Runtime rt(2, fib(16));
  EXPECT_EQ(rt.fiber_workers(), 16);
  for (int r = 0; r < 50; ++r) {
    std::vector<float> got(2, -1);
    rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
      got[ctx.device_id()] = only(ppermute(ctx, f1(ctx.device_id() + r), "x", {{0, 1}, {1, 0}})) +
                             only(psum(ctx, f1(1), "x"));
    });
    ASSERT_EQ(got, (std::vector<float>{1.0f + r + 2, 0.0f + r + 2})) << "round " << r;
  }
}

// The smallest stack (64 KiB: a psum's own frames under AddressSanitizer
// overflowed 16 KiB) with a body that needs little; and a size that
// is not a page multiple is rounded up to pages.
TEST(FiberAdversarialTest, MinimumAndUnalignedFiberStacks) {
  RuntimeOptions options = fib(2);
  options.fiber_stack_bytes = size_t{64} << 10;
  Runtime rt(32, options);
  std::atomic<int> wrong{0};
  for (int r = 0; r < 5; ++r) {
    rt.launch(Mesh::make({{"x", 32}}), [&](DeviceContext& ctx) {
      if (only(psum(ctx, f1(1), "x")) != 32.0f) wrong.fetch_add(1);
      barrier(ctx, "x");
    });
  }
  EXPECT_EQ(wrong.load(), 0);
  const FiberStackStats stats = rt.fiber_stack_stats();
  EXPECT_GE(stats.stacks, 32u);
  EXPECT_EQ(stats.reserved_bytes, stats.stacks * (size_t{64} << 10) + stats.guarded * 4096);

  options.fiber_stack_bytes = (size_t{64} << 10) + 1;
  Runtime odd(4, options);
  odd.launch(Mesh::make({{"x", 4}}), [](DeviceContext& ctx) { barrier(ctx, "x"); });
  const FiberStackStats odd_stats = odd.fiber_stack_stats();
  EXPECT_EQ(odd_stats.stacks, 4u);
  EXPECT_EQ(odd_stats.reserved_bytes, odd_stats.stacks * (size_t{68} << 10) + odd_stats.guarded * 4096);

  options.fiber_stack_bytes = (size_t{64} << 10) - 1;
  EXPECT_ERROR(Runtime(4, options), InvalidArgumentError, "fiber_stack_bytes must be 64 KiB");
}

// A thousand short launches, each with its own closed-form answer.
TEST(FiberAdversarialTest, AThousandShortLaunches) {
  Runtime rt(8, fib(2));
  const Mesh mesh = Mesh::make({{"x", 8}});
  int wrong = 0;
  std::vector<float> got(8);
  for (int r = 0; r < 1000; ++r) {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      got[ctx.device_id()] = only(psum(ctx, f1(ctx.device_id() + r), "x"));
    });
    for (float v : got) {
      if (v != 28.0f + 8.0f * r) ++wrong;
    }
  }
  EXPECT_EQ(wrong, 0);
  EXPECT_LE(rt.fiber_stack_stats().stacks, 8u + 2u);
}

}  // namespace
}  // namespace meshsim::fiber_adversarial_test
