// Runtime: the sharp edges of issue 9 — nested launches, contexts kept past
// their launch, what a device's exception becomes, devices started on demand,
// and deadlock reports that stay small at thousands of devices.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/claim_waits.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/launch_report.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"
#include "meshsim/runtime/exec/runtime.h"
#include "support/expect_error.h"

namespace meshsim::runtime_usage_test {
namespace {

// A barrier over `axes` that reports itself as operation `op`.
void named_barrier(DeviceContext& ctx, const AxisNames& axes, const char* op = "barrier") {
  const GroupRef g = DeviceHooks::group(ctx, axes);
  const OpScope scope(ctx, op, g);
  const CollectiveCall call(op, DType::kFloat32, {});
  g.rendezvous->slot(g.rank).publish(call, nullptr, nullptr);
  g.rendezvous->meet(g.rank, DeviceHooks::waiter(ctx));
}

// --- item 1: a launch from inside a body on a device its launch holds ---

TEST(NestedLaunchTest, OnTheCallingDeviceIsAnErrorAtOnce) {
  Runtime rt(4, {.launch_timeout = std::chrono::seconds(60)});
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() == 1) {
                             rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext&) {});
                           }
                         }),
               RuntimeUsageError,
               "device 1: launch on Mesh(x=2) from the body of device 1 would wait forever: "
               "device(s) 0, 1 belong to the launch on Mesh(x=2) that runs this body");
}

TEST(NestedLaunchTest, OnAnotherDeviceOfTheSameLaunchIsAnError) {
  Runtime rt(4);
  // Device 0 of a launch on {0, 1} launches on {1, 2}: device 1 is held.
  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() != 0) return;
                           rt.launch(Mesh(AbstractMesh({{"x", 2}}), {1, 2}), [](DeviceContext&) {});
                         }),
               RuntimeUsageError, "from the body of device 0 would wait forever: device(s) 1 belong");
}

TEST(NestedLaunchTest, ThroughAnIntermediateLaunchIsAnError) {
  Runtime rt(4);
  // {0, 1} -> device 0 launches on {2} (fine) -> device 2 launches on {1, 3}:
  // device 1 belongs to the outermost launch, which waits for this one.
  EXPECT_ERROR(
      rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
                [&](DeviceContext& outer) {
                  if (outer.device_id() != 0) return;
                  rt.launch(Mesh(AbstractMesh({{"x", 1}}), {2}), [&](DeviceContext&) {
                    rt.launch(Mesh(AbstractMesh({{"x", 2}}), {1, 3}), [](DeviceContext&) {});
                  });
                }),
      RuntimeUsageError,
      // Raised on device 2, in the launch device 0's body made: the outer
      // launch reports device 0's failure, with device 2 in the message.
      "device 0: device 2 of another launch: launch on Mesh(x=2; devices=[1, 3]) from the body "
      "of device 2 would wait forever: device(s) 1 belong to the launch on Mesh(x=2) that "
      "encloses this body's launch");
}

TEST(NestedLaunchTest, OnDisjointDevicesWorks) {
  Runtime rt(8);
  std::vector<int> inner_ids(8, -1);
  std::vector<int> sums(2, -1);
  rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}), [&](DeviceContext& ctx) {
    // Each outer device runs a launch of its own on 3 other devices.
    const int base = 2 + 3 * ctx.position();
    const Mesh inner(AbstractMesh({{"y", 3}}), {base, base + 1, base + 2});
    std::vector<int> seen(3, 0);
    rt.launch(inner, [&](DeviceContext& c) {
      named_barrier(c, "y");
      seen[c.position()] = c.device_id();
      inner_ids[c.device_id()] = c.axis_index("y");
    });
    sums[ctx.position()] = seen[0] + seen[1] + seen[2];
  });
  EXPECT_EQ(sums, (std::vector<int>{2 + 3 + 4, 5 + 6 + 7}));
  EXPECT_EQ(inner_ids, (std::vector<int>{-1, -1, 0, 1, 2, 0, 1, 2}));
}

// Two host launches whose bodies each launch on the other's device wait for
// each other, with no timeout to end it. The body with the smaller device id
// gives up with a DeadlockError naming the cycle (its launch fails and lets
// device 0 go), and the other launch then runs its nested launch: no hang,
// one error, one success.
TEST(NestedLaunchTest, CrossedNestedLaunchesEndWithADeadlockErrorOnOneSide) {
  Runtime rt(2);
  std::atomic<int> entered{0}, successes{0}, others{0};
  std::string error;
  std::mutex mu;
  const auto host = [&](int mine, int other) {
    try {
      rt.launch(Mesh(AbstractMesh({{"x", 1}}), {mine}), [&](DeviceContext& ctx) {
        entered.fetch_add(1);
        while (entered.load() < 2) ctx.yield();
        rt.launch(Mesh(AbstractMesh({{"x", 1}}), {other}), [](DeviceContext&) {});
      });
      successes.fetch_add(1);
    } catch (const DeadlockError& e) {
      std::lock_guard lock(mu);
      error = e.what();
    } catch (...) {
      others.fetch_add(1);
    }
  };
  std::thread a(host, 0, 1), b(host, 1, 0);
  a.join();
  b.join();
  EXPECT_EQ(successes.load(), 1);
  EXPECT_EQ(others.load(), 0);
  EXPECT_EQ(error,
            "device 0: launch on Mesh(x=1; devices=[1]) from the body of device 0 would wait "
            "forever, in a cycle of launches that wait for each other's devices: device 0 (in "
            "the launch on Mesh(x=1)) waits for device 1, held by the launch on Mesh(x=1; "
            "devices=[1]); device 1 (in the launch on Mesh(x=1; devices=[1])) waits for device "
            "0, held by the launch on Mesh(x=1)");
}

// A cycle through a nested launch: A's body (device 0) launches on device 3,
// whose body launches on device 1; B's body (device 1) launches on device 2;
// C's body (device 2) launches on device 0, which A holds until its nested
// launch ends. The waiting bodies are devices 3, 1 and 2: device 1 gives up,
// B fails, and A and C then finish.
TEST(NestedLaunchTest, ACycleThroughANestedLaunchIsBrokenByItsSmallestDevice) {
  Runtime rt(4);
  std::atomic<int> entered{0};
  std::vector<std::string> outcome(3);
  const auto one = [](int id) { return Mesh(AbstractMesh({{"x", 1}}), {id}); };
  const auto host = [&](int index, int mine, std::function<void()> nested) {
    try {
      rt.launch(one(mine), [&](DeviceContext& ctx) {
        entered.fetch_add(1);
        while (entered.load() < 3) ctx.yield();
        nested();
      });
      outcome[index] = "ok";
    } catch (const DeadlockError& e) {
      outcome[index] = e.what();
    } catch (const std::exception& e) {
      outcome[index] = std::string("unexpected: ") + e.what();
    }
  };
  std::thread a(host, 0, 0, [&] {
    rt.launch(one(3), [&](DeviceContext&) { rt.launch(one(1), [](DeviceContext&) {}); });
  });
  std::thread b(host, 1, 1, [&] { rt.launch(one(2), [](DeviceContext&) {}); });
  std::thread c(host, 2, 2, [&] { rt.launch(one(0), [](DeviceContext&) {}); });
  a.join();
  b.join();
  c.join();
  EXPECT_EQ(outcome[0], "ok");
  EXPECT_EQ(outcome[1],
            "device 1: launch on Mesh(x=1; devices=[2]) from the body of device 1 would wait "
            "forever, in a cycle of launches that wait for each other's devices: device 1 (in "
            "the launch on Mesh(x=1; devices=[1])) waits for device 2, held by the launch on "
            "Mesh(x=1; devices=[2]); device 2 (in the launch on Mesh(x=1; devices=[2])) waits "
            "for device 0, held by the launch on Mesh(x=1); device 3 (in the launch on Mesh(x=1; "
            "devices=[3])) waits for device 1, held by the launch on Mesh(x=1; devices=[1])");
  EXPECT_EQ(outcome[2], "ok");
}

// Runs `hosts` launches from host threads at once; launch k runs on
// `meshes[k]`, and each of its bodies, once every body of every launch has
// entered, runs `nested[k]`. Returns each launch's outcome: "ok" or the
// DeadlockError's message ("unexpected: ..." for anything else).
std::vector<std::string> crossed_launches(Runtime& rt, const std::vector<Mesh>& meshes,
                                          const std::vector<std::function<void(DeviceContext&)>>& nested) {
  int bodies = 0;
  for (const Mesh& m : meshes) bodies += m.size();
  std::atomic<int> entered{0};
  std::vector<std::string> outcome(meshes.size());
  std::vector<std::thread> hosts;
  for (size_t k = 0; k < meshes.size(); ++k) {
    hosts.emplace_back([&, k] {
      try {
        rt.launch(meshes[k], [&](DeviceContext& ctx) {
          entered.fetch_add(1);
          while (entered.load() < bodies) ctx.yield();
          nested[k](ctx);
        });
        outcome[k] = "ok";
      } catch (const DeadlockError& e) {
        outcome[k] = e.what();
      } catch (const std::exception& e) {
        outcome[k] = std::string("unexpected: ") + e.what();
      }
    });
  }
  for (std::thread& t : hosts) t.join();
  return outcome;
}

Mesh on(std::vector<int> ids) {
  const int n = static_cast<int>(ids.size());
  return Mesh(AbstractMesh({{"x", n}}), std::move(ids));
}

// Overlapping cycles: J holds devices 0 and 3, K holds 1 and 2; device 0's
// body launches on 1, device 3's on 2, device 1's on 3. Three waits that all
// reach each other, over two cycles: exactly one gives up, device 0's (the
// smallest), J fails, and K then finishes.
TEST(NestedLaunchTest, OverlappingCyclesAreBrokenOnceBySmallestDevice) {
  Runtime rt(4);
  const auto launch_on = [&](int id) { rt.launch(on({id}), [](DeviceContext&) {}); };
  const std::vector<std::string> outcome = crossed_launches(
      rt, {on({0, 3}), on({1, 2})},
      {[&](DeviceContext& ctx) { launch_on(ctx.device_id() == 0 ? 1 : 2); },
       [&](DeviceContext& ctx) {
         if (ctx.device_id() != 1) return;
         // Devices 3 and 1 alone make a cycle too: join it only once device
         // 0 waits as well, so that the three are one stuck set.
         while (ClaimWaits::process().size() < 2) ctx.yield();
         launch_on(3);
       }});
  EXPECT_THAT(outcome[0], ::testing::HasSubstr(
                              "device 0: launch on Mesh(x=1; devices=[1]) from the body of device "
                              "0 would wait forever, in a cycle of launches"));
  EXPECT_EQ(outcome[1], "ok");
}

// Waits (yielding the device) until a launch holds device `id` of `rt`.
void wait_until_claimed(Runtime& rt, DeviceContext& ctx, int id) {
  while (!RuntimeHooks::impl(rt).claimed(id)) ctx.yield();
}

// A launch that is still claiming holds what it claimed: device 4's body
// launches on devices 0 and 2, takes 0 and waits for 2, which L2 holds;
// L2's body (device 2) then launches on 0. Device 2 gives up.
TEST(NestedLaunchTest, ACycleThroughAPartlyClaimedLaunchIsBroken) {
  Runtime rt(5);
  const std::vector<std::string> outcome = crossed_launches(
      rt, {on({4}), on({2})},
      {[&](DeviceContext&) { rt.launch(on({0, 2}), [](DeviceContext&) {}); },
       [&](DeviceContext& ctx) {
         wait_until_claimed(rt, ctx, 0);
         rt.launch(on({0}), [](DeviceContext&) {});
       }});
  EXPECT_EQ(outcome[0], "ok");
  EXPECT_EQ(outcome[1],
            "device 2: launch on Mesh(x=1) from the body of device 2 would wait forever, in a "
            "cycle of launches that wait for each other's devices: device 2 (in "
            "the launch on Mesh(x=1; devices=[2])) waits for device 0, held by the launch on "
            "Mesh(x=2; devices=[0, 2]); device 4 (in the launch on Mesh(x=1; devices=[4])) waits "
            "for device 2, held by the launch on Mesh(x=1; devices=[2])");
}

// A host thread's launch that is still claiming is part of a cycle too: it
// takes device 0 and waits for 1, whose launch's body launches on 0. The
// body gives up; the host's launch then runs.
TEST(NestedLaunchTest, ACycleThroughAHostThreadsClaimIsBroken) {
  Runtime rt(2);
  std::atomic<bool> inside{false};
  std::string error;
  std::thread body_host([&] {
    try {
      rt.launch(on({1}), [&](DeviceContext& ctx) {
        inside.store(true);
        wait_until_claimed(rt, ctx, 0);
        rt.launch(on({0}), [](DeviceContext&) {});
      });
    } catch (const DeadlockError& e) {
      error = e.what();
    }
  });
  while (!inside.load()) std::this_thread::yield();
  EXPECT_NO_THROW(rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext&) {}));
  body_host.join();
  EXPECT_EQ(error,
            "device 1: launch on Mesh(x=1) from the body of device 1 would wait forever, in a "
            "cycle of launches that wait for each other's devices: device 1 (in the launch on "
            "Mesh(x=1; devices=[1])) waits for device 0, held by the launch on Mesh(x=2); the "
            "launch on Mesh(x=2) from a host thread waits for device 1, held by the launch on "
            "Mesh(x=1; devices=[1])");
}

// A body that waits to claim a device ends its wait with a CancelledError
// once its own launch fails meanwhile: device 0 waits for device 2, which a
// host launch holds until the test lets it go; device 1 then throws. The
// launch reports device 1's error, and device 0's wait ended without it.
TEST(NestedLaunchTest, AWaitingClaimEndsWhenItsOwnLaunchFails) {
  Runtime rt(3);
  std::atomic<bool> release{false};
  std::thread holder([&] {
    rt.launch(on({2}), [&](DeviceContext& ctx) {
      while (!release.load()) ctx.yield();
    });
  });
  std::string cancelled;
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() == 1) {
                             while (ClaimWaits::process().size() < 1) ctx.yield();
                             throw std::runtime_error("boom");
                           }
                           wait_until_claimed(rt, ctx, 2);
                           try {
                             rt.launch(on({2}), [](DeviceContext&) {});
                           } catch (const CancelledError& e) {
                             cancelled = e.what();
                             throw;
                           }
                         }),
               DeviceError, "device 1: std::runtime_error: boom");
  release.store(true);
  holder.join();
  EXPECT_EQ(cancelled,
            "launch from the body of device 0: its launch failed while this one waited for "
            "device 2, which another launch holds");
  EXPECT_EQ(ClaimWaits::process().size(), 0u);
}

// A LaunchRecord is filled by one launch at a time: a nested launch, or one
// from another host thread or on another runtime, that names the record a
// running launch fills would write it at the same time. It is refused at
// once, and the record is free again once its launch returns.
TEST(NestedLaunchTest, ARecordIsFilledByOneRunningLaunchAtATime) {
  Runtime rt(3);
  const auto one = [](int id) { return Mesh(AbstractMesh({{"x", 1}}), {id}); };
  const char* const kInUse =
      ": its LaunchOptions::record is being filled by another launch that is still running; a "
      "nested or concurrent launch needs a record of its own";
  LaunchRecord record;
  std::atomic<bool> inside{false}, refused{false};
  std::thread other([&] {
    while (!inside.load()) std::this_thread::yield();
    EXPECT_ERROR(rt.launch(one(2), [](DeviceContext&) {}, {.record = &record}),
                 RuntimeUsageError, std::string("launch on Mesh(x=1; devices=[2])") + kInUse);
    refused.store(true);
  });
  rt.launch(
      one(0),
      [&](DeviceContext& ctx) {
        EXPECT_ERROR(rt.launch(one(1), [](DeviceContext&) {}, {.record = &record}),
                     RuntimeUsageError, std::string("launch on Mesh(x=1; devices=[1])") + kInUse);
        inside.store(true);
        while (!refused.load()) ctx.yield();
      },
      {.record = &record});
  other.join();
  // Also for a launch on another runtime, nested in one that fills it.
  Runtime second(1);
  rt.launch(
      one(0),
      [&](DeviceContext&) {
        EXPECT_ERROR(second.launch(one(0), [](DeviceContext&) {}, {.record = &record}),
                     RuntimeUsageError, std::string("launch on Mesh(x=1)") + kInUse);
      },
      {.record = &record});
  // Free again, also for a launch that used it before.
  EXPECT_NO_THROW(rt.launch(one(1), [](DeviceContext&) {}, {.record = &record}));
  EXPECT_NO_THROW(rt.launch(one(0), [](DeviceContext&) {}, {.record = &record}));
}

// The crossed pair over two runtimes: each host launch holds device 0 of its
// runtime, and its body launches on device 0 of the other. The waits are the
// process's, so the cycle is found without a timeout; both bodies have agent
// id 0, so which one gives up is the address order's choice, but exactly one
// does, and its error names the other runtime's devices as such.
TEST(NestedLaunchTest, ACycleAcrossTwoRuntimesIsBroken) {
  Runtime a(1), b(1);
  const Mesh device0 = Mesh::make({{"x", 1}});
  std::atomic<int> entered{0};
  std::vector<std::string> outcome(2);
  const auto host = [&](int k, Runtime& mine, Runtime& other) {
    try {
      mine.launch(device0, [&](DeviceContext& ctx) {
        entered.fetch_add(1);
        while (entered.load() < 2) ctx.yield();
        other.launch(device0, [](DeviceContext&) {});
      });
      outcome[k] = "ok";
    } catch (const DeadlockError& e) {
      outcome[k] = e.what();
    } catch (const std::exception& e) {
      outcome[k] = std::string("unexpected: ") + e.what();
    }
  };
  std::thread ta(host, 0, std::ref(a), std::ref(b)), tb(host, 1, std::ref(b), std::ref(a));
  ta.join();
  tb.join();
  const int failed = outcome[0] == "ok" ? 1 : 0;
  EXPECT_EQ(outcome[1 - failed], "ok");
  EXPECT_EQ(outcome[failed],
            "device 0: launch on Mesh(x=1) from the body of device 0 would wait forever, in a "
            "cycle of launches that wait for each other's devices: device 0 (in the launch on "
            "Mesh(x=1)) waits for device 0 of another runtime, held by the launch on Mesh(x=1); "
            "device 0 of another runtime (in the launch on Mesh(x=1)) waits for device 0, held "
            "by the launch on Mesh(x=1)");
  EXPECT_EQ(ClaimWaits::process().size(), 0u);
}

// An error that escapes a body from a launch it made is the body's device's:
// the inner device (of another runtime here, whose ids mean other devices)
// stays in the message, not in device().
TEST(NestedLaunchTest, AnErrorFromALaunchInABodyIsThatBodysDevices) {
  Runtime outer(8);
  try {
    outer.launch(Mesh::make({{"x", 8}}), [&](DeviceContext& ctx) {
      if (ctx.position() != 3) return;
      Runtime inner(8);
      inner.launch(Mesh::make({{"y", 8}}), [](DeviceContext& c) {
        if (c.position() == 5) throw std::runtime_error("inner boom");
      });
    });
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "device 3: device 5 of another launch: std::runtime_error: inner boom");
    EXPECT_EQ(e.device(), 3);
    EXPECT_THROW(e.rethrow_original(), std::runtime_error);
  }
}

TEST(NestedLaunchTest, OnAnotherRuntimeWorks) {
  Runtime a(2), b(2);
  std::vector<int> ids(2, -1);
  a.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.device_id() != 0) return;
    b.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& c) {
      named_barrier(c, "x");
      ids[c.position()] = c.device_id();
    });
  });
  EXPECT_EQ(ids, (std::vector<int>{0, 1}));
}

// --- item 3: a DeviceContext kept past its launch ---

TEST(DeviceContextLifetimeTest, UseAfterTheLaunchIsAnError) {
  Runtime rt(2);
  DeviceContext* kept = nullptr;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.device_id() == 1) kept = &ctx;
  });
  ASSERT_NE(kept, nullptr);
  const std::string needle = "of device 1 called outside that device's launch";
  EXPECT_ERROR(kept->axis_index("x"), RuntimeUsageError, "axis_index " + needle);
  EXPECT_ERROR(kept->device_id(), RuntimeUsageError, needle);
  EXPECT_ERROR(kept->mesh(), RuntimeUsageError, needle);
  EXPECT_ERROR(DeviceHooks::group(*kept, "x"), RuntimeUsageError, needle);
  EXPECT_ERROR(DeviceHooks::waiter(*kept), RuntimeUsageError, needle);
}

// Device 0 keeps device 1's context; in a later launch without device 1 it
// uses it: an error, not a read of device 1's dead launch.
TEST(DeviceContextLifetimeTest, UseFromAnotherDeviceInALaterLaunchIsAnError) {
  Runtime rt(2);
  DeviceContext* kept = nullptr;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.device_id() == 1) kept = &ctx;
  });
  EXPECT_ERROR(rt.launch(Mesh(AbstractMesh({{"x", 1}}), {0}),
                         [&](DeviceContext&) { kept->axis_index("x"); }),
               RuntimeUsageError, "axis_index of device 1 called outside that device's launch");
}

// --- item 10: what the caller learns about a device's exception ---

TEST(DeviceErrorTest, NamesTheDeviceTheTypeAndTheMessage) {
  Runtime rt(4);
  try {
    rt.launch(Mesh::make({{"x", 4}}), [](DeviceContext& ctx) {
      if (ctx.device_id() == 2) throw std::runtime_error("boom");
    });
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_STREQ(e.what(), "device 2: std::runtime_error: boom");
    EXPECT_EQ(e.device(), 2);
    EXPECT_EQ(e.type_name(), "std::runtime_error");
    EXPECT_THROW(e.rethrow_original(), std::runtime_error);
  }
}

TEST(DeviceErrorTest, NonStdExceptionNamesItsType) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [](DeviceContext& ctx) {
                           if (ctx.device_id() == 1) throw 42;
                         }),
               DeviceError, "device 1: int (not derived from std::exception)");
}

// A CancelledError the user throws is that device's error, not a silent
// cancellation; its peers blocked in a barrier are released.
TEST(DeviceErrorTest, UserThrownCancelledErrorIsTheDevicesError) {
  Runtime rt(4);
  try {
    rt.launch(Mesh::make({{"x", 4}}), [](DeviceContext& ctx) {
      if (ctx.device_id() == 3) throw CancelledError("user gave up");
      named_barrier(ctx, "x");
    });
    FAIL() << "expected CancelledError";
  } catch (const CancelledError& e) {
    EXPECT_STREQ(e.what(), "device 3: user gave up");
    EXPECT_EQ(e.device(), 3);
  }
}

// --- item 21: device threads started on demand, up to a limit ---

TEST(RuntimeGrowthTest, StartsDeviceThreadsOnDemand) {
  Runtime rt({.max_devices = 16});
  EXPECT_EQ(rt.num_devices(), 16);
  EXPECT_EQ(rt.started_devices(), 0);
  std::vector<int> ids(3, -1);
  rt.launch(Mesh(AbstractMesh({{"x", 3}}), {9, 2, 5}), [&](DeviceContext& ctx) {
    named_barrier(ctx, "x");
    ids[ctx.position()] = ctx.device_id();
  });
  EXPECT_EQ(ids, (std::vector<int>{9, 2, 5}));
  EXPECT_EQ(rt.started_devices(), 3);
  rt.launch(Mesh::make({{"x", 4}}), [](DeviceContext& ctx) { named_barrier(ctx, "x"); });
  EXPECT_EQ(rt.started_devices(), 6);  // 0, 1, 3 are new
}

TEST(RuntimeGrowthTest, DefaultLimit) {
  Runtime rt;
  EXPECT_EQ(rt.num_devices(), RuntimeOptions::kDefaultMaxDevices);
  EXPECT_EQ(rt.started_devices(), 0);
}

TEST(RuntimeGrowthTest, MeshBeyondTheLimitIsAnError) {
  Runtime rt({.max_devices = 4});
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 8}}), [](DeviceContext&) {}), RuntimeUsageError,
               "mesh Mesh(x=8) uses device 4 but the runtime has at most 4 devices "
               "(RuntimeOptions::max_devices)");
  EXPECT_EQ(rt.started_devices(), 0);
  Runtime fixed(2);
  EXPECT_ERROR(fixed.launch(Mesh::make({{"x", 3}}), [](DeviceContext&) {}), RuntimeUsageError,
               "uses device 2 but the runtime has at most 2 devices");
  EXPECT_ERROR(Runtime(4, {.max_devices = 2}), InvalidArgumentError,
               "max_devices 2 is less than the 4 devices");
}

TEST(RuntimeGrowthTest, ConcurrentLaunchesGrowTheSameDevices) {
  Runtime rt({.max_devices = 64});
  std::atomic<int> runs{0};
  auto run = [&](int first) {
    for (int i = 0; i < 20; ++i) {
      std::vector<int> ids;
      for (int d = 0; d < 8; ++d) ids.push_back((first + 8 * i + d) % 64);
      rt.launch(Mesh(AbstractMesh({{"x", 8}}), ids), [&](DeviceContext& ctx) {
        named_barrier(ctx, "x");
        runs.fetch_add(1);
      });
    }
  };
  std::thread a(run, 0), b(run, 4);
  a.join();
  b.join();
  EXPECT_EQ(runs.load(), 2 * 20 * 8);
  EXPECT_EQ(rt.started_devices(), 64);
}

// --- item 13: deadlock reports summarize runs of devices ---

// Every device but the last waits in a barrier over all of them: 1 device
// finished, n - 1 waiting in the one group.
std::string deadlock_report(Runtime& rt, int n, double* ms) {
  const Mesh mesh = Mesh::make({{"x", n}});
  std::string what;
  const auto start = std::chrono::steady_clock::now();
  try {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      if (ctx.device_id() != n - 1) named_barrier(ctx, "x", "psum");
    });
  } catch (const DeadlockError& e) {
    what = e.what();
  }
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return what;
}

TEST(DeadlockReportTest, SummarizesRunsOfDevicesAt4096) {
  Runtime rt(4096);
  for (int n : {1024, 4096}) {
    double ms = 0;
    const std::string what = deadlock_report(rt, n, &ms);
    std::printf("deadlock on %d devices: report of %zu bytes, launch failed in %.1f ms\n", n,
                what.size(), ms);
    EXPECT_LT(what.size(), 64u * 1024);
    EXPECT_THAT(what, ::testing::HasSubstr("devices 0–" + std::to_string(n - 2) +
                                           ": waiting in psum on axes 'x', group 0 of 1"));
    EXPECT_THAT(what, ::testing::HasSubstr("device " + std::to_string(n - 1) + ": finished"));
  }
}

// Alternating states: devices grouped by state, not by contiguous runs.
TEST(DeadlockReportTest, GroupsDevicesByState) {
  Runtime rt(4096);
  const Mesh mesh = Mesh::make({{"x", 4096}});
  try {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      if (ctx.device_id() % 2 == 0) named_barrier(ctx, "x", "psum");
    });
    FAIL() << "expected DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    EXPECT_LT(what.size(), 4096u);
    EXPECT_THAT(what, ::testing::HasSubstr("devices 0–4094 step 2: waiting in psum on axes 'x', "
                                           "group 0 of 1 after 0 collectives"));
    EXPECT_THAT(what, ::testing::HasSubstr("devices 1–4095 step 2: finished"));
  }
}

// Groups of one set summarized together: 'x' is the major axis, so the
// devices of one group are 4 apart; the last row is missing from every group.
TEST(DeadlockReportTest, SummarizesTheGroupsOfOneSet) {
  Runtime rt(16);
  const Mesh mesh = Mesh::make({{"x", 4}, {"y", 4}});
  try {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      if (ctx.axis_index("x") != 3) named_barrier(ctx, "x", "psum");
    });
    FAIL() << "expected DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    EXPECT_THAT(what, ::testing::HasSubstr("devices 0–11: waiting in psum on axes 'x', groups 0–3 "
                                           "of 4 after 0 collectives"));
    EXPECT_THAT(what, ::testing::HasSubstr("devices 12–15: finished"));
  }
}

// The report alone, from snapshots of 4096 devices: every device waits in
// one group of all of them (what made the old report O(n^2)), or every
// device is in a state of its own (the worst case for its size).
TEST(DeadlockReportTest, SummaryOf4096DevicesIsSmallAndFast) {
  std::vector<int> ids(4096);
  for (int i = 0; i < 4096; ++i) ids[i] = i;
  const Rendezvous group(ids, "axes 'x', group 0 of 1");
  std::vector<DeviceSnapshot> one_group(4096), all_different(4096);
  for (int i = 0; i < 4096; ++i) {
    one_group[i] = {.id = i, .state = DeviceSnapshot::State::kWaiting, .op = "psum",
                    .group = &group, .blocked_in_group_meeting = true};
    all_different[i] = {.id = i, .state = DeviceSnapshot::State::kOwnCode,
                        .collectives = static_cast<uint64_t>(i)};
  }
  for (const auto* devices : {&one_group, &all_different}) {
    const auto start = std::chrono::steady_clock::now();
    const std::string report = summarize_devices(*devices);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("summary of 4096 devices: %zu bytes in %.2f ms\n", report.size(), ms);
    EXPECT_LT(report.size(), 64u * 1024);
    EXPECT_LT(ms, 5'000);  // generous; measured in the report
  }
  EXPECT_EQ(summarize_devices(one_group),
            "\n  devices 0–4095: waiting in psum on axes 'x', group 0 of 1 after 0 collectives");
  EXPECT_THAT(summarize_devices(all_different),
              ::testing::EndsWith("\n  … and 4064 more states of 4064 devices"));
}

TEST(DeadlockReportTest, CompressIds) {
  const std::vector<int> ids = {0, 1, 2, 3, 7, 9, 20, 18, 16, 5};
  EXPECT_EQ(compress_ids(ids), "0–3, 7, 9, 20–16 step -2, 5");
  EXPECT_EQ(compress_ids(ids, 2), "0–3, 7, … (10 in all)");
  EXPECT_EQ(compress_ids(std::vector<int>{4, 6}), "4, 6");
}

}  // namespace
}  // namespace meshsim::runtime_usage_test
