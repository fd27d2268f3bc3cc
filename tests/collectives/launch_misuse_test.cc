// Misuse seen through the public collectives and drivers: a shard_map nested
// on its own devices, a context kept past its launch, devices that disagree on
// a collective's groups, and deadlock reports at thousands of devices.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::launch_misuse_test {
namespace {

const Array kOne = Array::from_values<float>({1}, {1.0f});

TEST(LaunchMisuseTest, ShardMapInsideABodyOnItsOwnDevicesIsAnError) {
  Runtime rt(4, {.launch_timeout = std::chrono::seconds(60)});
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           if (ctx.device_id() != 2) return;
                           shard_map(
                               rt, Mesh::make({{"i", 4}}),
                               [](DeviceContext& c, const Array& s) { return psum(c, s, "i"); },
                               P{"i"}, P{}, Array::zeros({4}, DType::kFloat32));
                         }),
               RuntimeUsageError,
               "device 2: launch on Mesh(i=4) from the body of device 2 would wait forever: "
               "device(s) 0, 1, 2, 3 belong to the launch on Mesh(x=4) that runs this body");
}

TEST(LaunchMisuseTest, ShardMapInsideABodyOnOtherDevicesWorks) {
  Runtime rt(6);
  std::vector<float> sums(2, 0);
  rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}), [&](DeviceContext& ctx) {
    const int base = 2 + 2 * ctx.position();
    const Array total = shard_map(
        rt, Mesh(AbstractMesh({{"i", 2}}), {base, base + 1}),
        [](DeviceContext& c, const Array& s) { return psum(c, s, "i"); }, P{"i"}, P{},
        Array::from_values<float>({2}, {1.0f, 2.0f + static_cast<float>(ctx.position())}));
    sums[ctx.position()] = total.span<float>()[0];
  });
  EXPECT_EQ(sums, (std::vector<float>{3.0f, 4.0f}));
}

TEST(LaunchMisuseTest, CollectiveOnAContextKeptPastItsLaunchIsAnError) {
  Runtime rt(2);
  DeviceContext* kept = nullptr;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.device_id() == 0) kept = &ctx;
    (void)psum(ctx, kOne, "x");
  });
  ASSERT_NE(kept, nullptr);
  EXPECT_ERROR((void)psum(*kept, kOne, "x"), RuntimeUsageError,
               "of device 0 called outside that device's launch");
  EXPECT_ERROR((void)kept->axis_index("x"), RuntimeUsageError,
               "axis_index of device 0 called outside that device's launch");
  // The runtime is unharmed.
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) { (void)psum(ctx, kOne, "x"); });
}

// Devices 0 and 3 reduce over 'x', devices 1 and 2 over 'y': every group
// misses a member that waits in another group.
TEST(CollectiveMismatchTest, DifferentAxesNameBothSides) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           const int d = ctx.device_id();
                           (void)psum(ctx, kOne, d == 0 || d == 3 ? "x" : "y");
                         }),
               CollectiveMismatchError,
               "device 0: collective mismatch: device 0 calls psum on axes 'x', group 0 of 2 "
               "[devices 0, 2] but device 2 calls psum on axes 'y', group 1 of 2 "
               "[devices 2, 3]");
}

TEST(CollectiveMismatchTest, DifferentAxisIndexGroupsNameBothSides) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           const int d = ctx.device_id();
                           if (d == 0 || d == 3) {
                             (void)psum(ctx, kOne, "x", {{0, 1}, {2, 3}});
                           } else {
                             (void)psum(ctx, kOne, "x", {{0, 2}, {1, 3}});
                           }
                         }),
               CollectiveMismatchError,
               "collective mismatch: device 0 calls psum on axes 'x', group 0 of 2 [devices 0, 1] "
               "but device 1 calls psum on axes 'x', group 1 of 2 [devices 1, 3]");
}

// Blocked in the same group on different ops is the group's own mismatch
// check's business; a precv over different axes is a plain deadlock.
TEST(CollectiveMismatchTest, PointToPointWaitsAreADeadlockNotAMismatch) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           const bool on_x = ctx.device_id() < 2;
                           (void)precv(ctx, {}, {1}, DType::kFloat32, on_x ? "x" : "y",
                                       {{0, 1}, {1, 0}});
                         }),
               DeadlockError, "waiting in precv");
}

// Devices 1..n-1 precv from a neighbour that never sends.
std::string precv_deadlock(Runtime& rt, int n, double* ms) {
  std::vector<std::pair<int, int>> perm;
  for (int i = 0; i + 1 < n; ++i) perm.push_back({i, i + 1});
  std::string what;
  const auto start = std::chrono::steady_clock::now();
  try {
    rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
      (void)precv(ctx, {}, {1}, DType::kFloat32, "x", perm);
    });
  } catch (const DeadlockError& e) {
    what = e.what();
  }
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return what;
}

TEST(DeadlockReportTest, PrecvWithoutSendersAtThousandsOfDevices) {
  Runtime rt(4096);
  for (int n : {1024, 4096}) {
    double ms = 0;
    const std::string what = precv_deadlock(rt, n, &ms);
    std::printf("precv deadlock on %d devices: %zu bytes, launch failed after %.1f ms\n", n,
                what.size(), ms);
    EXPECT_LT(what.size(), 64u * 1024);
    EXPECT_THAT(what, ::testing::HasSubstr("devices 1–" + std::to_string(n - 1) +
                                           ": waiting in precv on axes 'x', group 0 of 1"));
    EXPECT_THAT(what, ::testing::HasSubstr("device 0: finished"));
  }
}

TEST(DeadlockReportTest, PsumOnHalfTheDevices) {
  Runtime rt(4096);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4096}}),
                         [](DeviceContext& ctx) {
                           if (ctx.device_id() % 2 == 0) (void)psum(ctx, kOne, "x");
                         }),
               DeadlockError,
               "devices 0–4094 step 2: waiting in psum on axes 'x', group 0 of 1 after 0 "
               "collectives");
}

}  // namespace
}  // namespace meshsim::launch_misuse_test
