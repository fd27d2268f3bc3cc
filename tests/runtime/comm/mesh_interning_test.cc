// The runtime's interned meshes (MeshState) and the per-device group cache:
// launches on 10,000 different sub-meshes keep the interned set bounded and
// stay right after eviction; a mesh a running launch uses is never evicted; a
// loop over 100 meshes reuses both the interned state and the group cache;
// the group cache drops the mesh turned to least recently; meshes of one
// shape share their group layouts.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim::mesh_interning_test {
namespace {

// A mesh of two devices, `a` at position 0 and `b` at 1, over one axis.
Mesh pair_mesh(const std::string& axis, int a, int b) {
  return Mesh(AbstractMesh({{axis, 2}}), {a, b});
}

// The exchange every launch here runs: each device of a two-device mesh sends
// its id to the other over the runtime's fabric; `got[position]` is what
// it received.
void exchange(DeviceContext& ctx, std::vector<int>& got) {
  const std::string axis = ctx.mesh().abstract_mesh().axis_names()[0];
  const GroupRef group = DeviceHooks::group(ctx, axis);
  Waiter& waiter = DeviceHooks::waiter(ctx);
  const int peer = 1 - group.rank;
  const std::span<const int> ids = group.rendezvous->device_ids();
  group.fabric->link(ids[group.rank], ids[peer], Fabric::Lane::kMessages)
      .post(waiter, Array::scalar<int32_t>(ctx.device_id()));
  Link& in = group.fabric->link(ids[peer], ids[group.rank], Fabric::Lane::kMessages);
  in.next(waiter);
  got[ctx.position()] = in.take_message().at<int32_t>({});
  in.release();
}

std::vector<int> launch_exchange(Runtime& rt, const Mesh& mesh) {
  std::vector<int> got(2, -1);
  rt.launch(mesh, [&](DeviceContext& ctx) { exchange(ctx, got); });
  return got;
}

TEST(MeshInterningTest, TenThousandSubMeshesStayBoundedAndRight) {
  constexpr int kDevices = 64;
  constexpr int kLaunches = 10'000;
  Runtime rt(kDevices);
  const uint64_t created_before = MeshState::created_count();
  for (int k = 0; k < kLaunches; ++k) {
    // Every (a, b) with a != b, then again under the next axis name.
    const int pairs = kDevices * (kDevices - 1);
    const int a = (k % pairs) / (kDevices - 1);
    const int b = (a + 1 + (k % pairs) % (kDevices - 1)) % kDevices;
    const Mesh mesh = pair_mesh("axis" + std::to_string(k / pairs), a, b);
    ASSERT_EQ(launch_exchange(rt, mesh), (std::vector<int>{b, a})) << mesh;
    ASSERT_LE(rt.interned_mesh_count(), Runtime::kMaxInternedMeshes);
  }
  EXPECT_EQ(MeshState::created_count() - created_before, static_cast<uint64_t>(kLaunches));
  // The first mesh was evicted long ago: interned again, and right.
  EXPECT_EQ(launch_exchange(rt, pair_mesh("axis0", 0, 1)), (std::vector<int>{1, 0}));
  EXPECT_EQ(MeshState::created_count() - created_before, static_cast<uint64_t>(kLaunches) + 1);
}

// A launch still running on its mesh while others push it out of the
// interned set: its MeshState stays alive, and the launch finishes right.
TEST(MeshInterningTest, ARunningLaunchPinsItsMesh) {
  Runtime rt(4);
  const Mesh pinned = pair_mesh("pinned", 2, 3);
  std::atomic<bool> started{false};
  std::atomic<bool> go{false};
  std::vector<int> got(2, -1);
  std::thread holder([&] {
    rt.launch(pinned, [&](DeviceContext& ctx) {
      started.store(true);
      while (!go.load()) ctx.yield();  // lets a fiber worker run its other devices
      exchange(ctx, got);
    });
  });
  while (!started.load()) std::this_thread::yield();
  for (size_t k = 0; k < 2 * Runtime::kMaxInternedMeshes; ++k) {
    const Mesh other = pair_mesh("other" + std::to_string(k), k % 2, 1 - k % 2);
    ASSERT_EQ(launch_exchange(rt, other),
              (std::vector<int>{1 - static_cast<int>(k % 2), static_cast<int>(k % 2)}));
  }
  EXPECT_EQ(rt.interned_mesh_count(), Runtime::kMaxInternedMeshes);
  go.store(true);
  holder.join();
  EXPECT_EQ(got, (std::vector<int>{3, 2}));
  // It was never evicted, so launching on it again creates nothing.
  const uint64_t created = MeshState::created_count();
  EXPECT_EQ(launch_exchange(rt, pinned), (std::vector<int>{3, 2}));
  EXPECT_EQ(MeshState::created_count(), created);
}

// 100 meshes on the same two devices (more than the old cache's 64 entries):
// the second pass creates no MeshState and every group lookup hits the
// device's cache.
TEST(MeshInterningTest, ALoopOverAHundredMeshesReusesTheirState) {
  constexpr int kMeshes = 100;
  Runtime rt(2);
  std::vector<Mesh> meshes;
  for (int i = 0; i < kMeshes; ++i)
    meshes.push_back(pair_mesh("m" + std::to_string(i), i % 2, 1 - i % 2));
  for (const Mesh& mesh : meshes) launch_exchange(rt, mesh);
  const uint64_t created = MeshState::created_count();
  for (const Mesh& mesh : meshes) {
    std::vector<int> got(2, -1);
    std::vector<uint64_t> misses(2, 0);
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const uint64_t before = DeviceHooks::device(ctx).group_cache_misses;
      exchange(ctx, got);
      misses[ctx.position()] = DeviceHooks::device(ctx).group_cache_misses - before;
    });
    EXPECT_EQ(misses, (std::vector<uint64_t>{0, 0})) << mesh;
    EXPECT_EQ(got, (std::vector<int>{mesh.device_ids()[1], mesh.device_ids()[0]})) << mesh;
  }
  EXPECT_EQ(MeshState::created_count(), created);
}

// The device's group cache drops the mesh it turned to least recently, not
// the one it filled first: a mesh used again just before the cache overflows
// keeps its groups (a device writes its entry's recency only when it turns to
// the mesh, not on every lookup; this pins that the turn still counts).
TEST(MeshInterningTest, TheGroupCacheDropsTheMeshTurnedToLeastRecently) {
  constexpr size_t kFull = Runtime::kMaxInternedMeshes;
  Runtime rt(2);
  const Mesh kept = pair_mesh("kept", 0, 1);
  std::vector<Mesh> others;
  for (size_t i = 0; i < kFull; ++i) others.push_back(pair_mesh("m" + std::to_string(i), 0, 1));
  launch_exchange(rt, kept);
  for (size_t i = 0; i + 1 < kFull; ++i) launch_exchange(rt, others[i]);  // the cache is full
  launch_exchange(rt, kept);                                             // a turn back
  launch_exchange(rt, others[kFull - 1]);                                // one too many
  std::vector<uint64_t> misses(2, 99);
  std::vector<size_t> cached(2, 0);
  std::vector<int> got(2, -1);
  rt.launch(kept, [&](DeviceContext& ctx) {
    const DeviceState& device = DeviceHooks::device(ctx);
    const uint64_t before = device.group_cache_misses;
    exchange(ctx, got);
    misses[ctx.position()] = device.group_cache_misses - before;
    cached[ctx.position()] = device.group_cache.size();
  });
  EXPECT_EQ(misses, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(cached, (std::vector<size_t>{kFull, kFull}));
  EXPECT_EQ(got, (std::vector<int>{1, 0}));
  // others[0], the least recent, was the one dropped: it misses again.
  rt.launch(others[0], [&](DeviceContext& ctx) {
    const uint64_t before = DeviceHooks::device(ctx).group_cache_misses;
    exchange(ctx, got);
    misses[ctx.position()] = DeviceHooks::device(ctx).group_cache_misses - before;
  });
  EXPECT_EQ(misses, (std::vector<uint64_t>{1, 1}));
}

// Which positions form each group depends on the mesh's shape only: meshes of
// one shape on other devices share the layout (computed once per axes), and
// each still meets on its own devices.
TEST(MeshInterningTest, MeshesOfOneShapeShareTheirGroupLayouts) {
  Runtime rt(8);
  const GroupLayouts& layouts = RuntimeHooks::impl(rt).group_layouts();
  const AbstractMesh shape({{"x", 2}, {"y", 2}});
  const Mesh low(shape, {0, 1, 2, 3}), high(shape, {7, 6, 5, 4});
  // Per position: the device ids of its group over "x", then over ("x", "y").
  const auto groups_of = [&](const Mesh& mesh) {
    std::vector<std::vector<int>> over_x(4), over_all(4);
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const std::span<const int> x = DeviceHooks::group(ctx, "x").rendezvous->device_ids();
      const std::span<const int> all =
          DeviceHooks::group(ctx, {"x", "y"}).rendezvous->device_ids();
      over_x[ctx.position()].assign(x.begin(), x.end());
      over_all[ctx.position()].assign(all.begin(), all.end());
    });
    return std::pair(over_x, over_all);
  };
  const uint64_t before = layouts.computed();
  const auto [low_x, low_all] = groups_of(low);
  EXPECT_EQ(layouts.computed(), before + 2);
  const auto [high_x, high_all] = groups_of(high);
  EXPECT_EQ(layouts.computed(), before + 2);  // the same shape: no new layout
  // Position p = (x, y) = (p / 2, p % 2): a group over "x" holds p and p ^ 2.
  EXPECT_EQ(low_x, (std::vector<std::vector<int>>{{0, 2}, {1, 3}, {0, 2}, {1, 3}}));
  EXPECT_EQ(high_x, (std::vector<std::vector<int>>{{7, 5}, {6, 4}, {7, 5}, {6, 4}}));
  EXPECT_EQ(low_all[3], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(high_all[0], (std::vector<int>{7, 6, 5, 4}));
  groups_of(Mesh(AbstractMesh({{"x", 4}, {"y", 1}}), {0, 1, 2, 3}));
  EXPECT_EQ(layouts.computed(), before + 4);  // another shape
}

}  // namespace
}  // namespace meshsim::mesh_interning_test
