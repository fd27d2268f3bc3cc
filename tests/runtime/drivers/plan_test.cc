// ShardMapPlan: the AbstractMesh seed scenario (one plan, two concrete meshes
// of the same shape, a cache hit on the second), the concrete-mesh plan's
// device-mismatch error, the cache key (shape and dtype changes miss), the
// no-copy path for matching shardings and the reshard path for others,
// replicated / partially replicated / multi-axis specs against host
// references, the replication check, concurrent calls from two host threads
// on disjoint meshes, and the errors.

#include "meshsim/runtime/drivers/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/mesh/sharding.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/drivers/sharded_array.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "support/expect_error.h"

namespace meshsim::plan_test {
namespace {

Array times(const Array& a, int32_t k) {
  Array out = a.clone();
  for (int32_t& v : out.mutable_span<int32_t>()) v *= k;
  return out;
}

Array plus(const Array& a, int32_t k) {
  Array out = a.clone();
  for (int32_t& v : out.mutable_span<int32_t>()) v += k;
  return out;
}

const AbstractMesh kX2({{"x", 2}});

// Records which devices ran the body (thread-safe: devices run in parallel).
struct DeviceLog {
  std::mutex mu;
  std::set<int> devices;
  void add(int device) {
    std::lock_guard lock(mu);
    devices.insert(device);
  }
  std::set<int> take() {
    std::lock_guard lock(mu);
    return std::exchange(devices, {});
  }
};

// The seed: mesh1 = devices 0-1, mesh2 = devices 2-3, arrays put replicated
// (P()) on each; shard_map(x * 2, abstract_mesh, P('x'), P('x')) runs on both,
// the second call a cache hit, each on its arguments' devices.
TEST(PlanSeedTest, AbstractMeshPlanRunsOnBothMeshesAndHitsTheCache) {
  Runtime rt(4);
  const Mesh mesh1(kX2, {0, 1});
  const Mesh mesh2(kX2, {2, 3});
  const Array x = Array::iota({8}, DType::kInt32);
  const ShardedArray arr1 = device_put(x, NamedSharding(mesh1, P{}));
  const ShardedArray arr2 = device_put(x, NamedSharding(mesh2, P{}));
  DeviceLog log;
  const ShardMapPlan f(
      rt, kX2,
      [&](DeviceContext& ctx, const Array& shard) {
        log.add(ctx.device_id());
        return times(shard, 2);
      },
      {P{"x"}}, {P{"x"}});

  const ShardedArray y1 = f({arr1})[0];
  EXPECT_EQ(log.take(), (std::set<int>{0, 1}));
  EXPECT_EQ(f.stats().misses, 1);
  EXPECT_EQ(f.stats().hits, 0);
  const ShardedArray y2 = f({arr2})[0];
  EXPECT_EQ(log.take(), (std::set<int>{2, 3}));
  EXPECT_EQ(f.stats().misses, 1);
  EXPECT_EQ(f.stats().hits, 1);

  const Array expected = times(x, 2);
  EXPECT_TRUE(array_equal(y1.gather(), expected)) << first_difference(y1.gather(), expected);
  EXPECT_TRUE(array_equal(y2.gather(), expected)) << first_difference(y2.gather(), expected);
  EXPECT_EQ(y1.sharding(), NamedSharding(mesh1, P{"x"}));
  EXPECT_EQ(y2.sharding(), NamedSharding(mesh2, P{"x"}));
  EXPECT_TRUE(array_equal(y2.shard(3), Array::from_values<int32_t>({4}, {8, 10, 12, 14})));
  // The P() arguments were resharded to P('x'), once per call.
  EXPECT_EQ(f.stats().reshards, 2);
}

// The same body with the concrete mesh1 baked in: the call on mesh2's
// arrays is the seed's DEVICE MISMATCH ERROR, naming both device sets.
TEST(PlanSeedTest, ConcreteMeshPlanRejectsArraysOnOtherDevices) {
  Runtime rt(4);
  const Mesh mesh1(kX2, {0, 1});
  const Mesh mesh2(kX2, {2, 3});
  const Array x = Array::iota({8}, DType::kInt32);
  const ShardMapPlan f(
      rt, mesh1, [](DeviceContext&, const Array& shard) { return times(shard, 2); }, {P{"x"}},
      {P{"x"}});
  EXPECT_TRUE(array_equal(f({device_put(x, NamedSharding(mesh1, P{}))})[0].gather(), times(x, 2)));
  EXPECT_ERROR(f({device_put(x, NamedSharding(mesh2, P{}))}), DeviceMismatchError,
               "shard_map plan on Mesh(x=2): input 0 lives on devices [2, 3] (Mesh(x=2; "
               "devices=[2, 3])) but the call runs on devices [0, 1]");
  EXPECT_EQ(f.stats().misses, 1);
  EXPECT_EQ(f.stats().hits, 0);  // the rejected call never reached the cache
}

// The cache key holds the global shapes and dtypes: a new shape or dtype is a
// miss (with its own, right geometry), the old one still hits.
TEST(PlanCacheTest, ShapeAndDtypeChangesMissAndNeverHitWrongly) {
  Runtime rt(2);
  const Mesh mesh(kX2, {0, 1});
  const ShardMapPlan f(
      rt, kX2, [](DeviceContext& ctx, const Array& shard) {
        Array out = shard.astype(DType::kInt32);
        for (int32_t& v : out.mutable_span<int32_t>()) v = v * 10 + ctx.axis_index("x");
        return out;
      },
      {P{"x"}}, {P{"x"}});
  const auto run = [&](const Array& a) { return f({device_put(a, NamedSharding(mesh, P{"x"}))})[0]; };
  const ShardedArray a = run(Array::iota({4}, DType::kInt32));
  EXPECT_TRUE(array_equal(a.gather(), Array::from_values<int32_t>({4}, {0, 10, 21, 31})));
  const ShardedArray b = run(Array::iota({6}, DType::kInt32));
  EXPECT_TRUE(array_equal(b.gather(), Array::from_values<int32_t>({6}, {0, 10, 20, 31, 41, 51})));
  const ShardedArray c = run(Array::iota({4}, DType::kFloat32));
  EXPECT_TRUE(array_equal(c.gather(), Array::from_values<int32_t>({4}, {0, 10, 21, 31})));
  const ShardedArray d = run(Array::iota({2, 2}, DType::kInt32));
  EXPECT_EQ(d.shape(), (Shape{2, 2}));
  EXPECT_EQ(f.stats().misses, 4);
  EXPECT_EQ(f.stats().hits, 0);
  run(Array::iota({6}, DType::kInt32));
  run(Array::iota({4}, DType::kInt32));
  EXPECT_EQ(f.stats().misses, 4);
  EXPECT_EQ(f.stats().hits, 2);
}

// An argument whose sharding is the in_spec reaches the body as its own
// shards: same storage, no split copy; the outputs are the body's arrays.
TEST(PlanTest, MatchingShardingIsPassedWithoutCopy) {
  Runtime rt(4);
  const Mesh mesh(AbstractMesh({{"x", 2}, {"y", 2}}), {3, 1, 2, 0});
  const Array input = Array::iota({4, 6, 2}, DType::kInt32);
  const ShardedArray a = device_put(input, NamedSharding(mesh, P{"x", "y"}));
  // P{"x", "y", nullptr}: normalized, the same sharding.
  std::vector<Array> seen(4), returned(4);
  const ShardMapPlan f(
      rt, mesh.abstract_mesh(),
      [&](DeviceContext& ctx, const Array& shard) {
        seen[ctx.position()] = shard;
        returned[ctx.position()] = plus(shard, 1);
        return returned[ctx.position()];
      },
      {P{"x", "y", nullptr}}, {P{"x", "y"}});
  const ShardedArray out = f({a})[0];
  EXPECT_EQ(f.stats().reshards, 0);
  for (int p = 0; p < 4; ++p) {
    const int device = mesh.device_at(p);
    EXPECT_TRUE(seen[p].shares_storage_with(a.shard(device))) << "device " << device;
    EXPECT_TRUE(out.shard(device).shares_storage_with(returned[p])) << "device " << device;
  }
  EXPECT_TRUE(array_equal(out.gather(), plus(input, 1)));
}

// A plan kept past its Runtime fails cleanly; its outputs stay valid.
TEST(PlanTest, ACallAfterTheRuntimeWasDestroyedIsAnError) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  const ShardedArray a = device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x"}));
  auto rt = std::make_unique<Runtime>(2);
  const ShardMapPlan f(
      *rt, mesh.abstract_mesh(), [](DeviceContext&, const Array& shard) { return plus(shard, 1); },
      {P{"x"}}, {P{"x"}});
  const ShardedArray out = f({a})[0];
  rt.reset();
  EXPECT_ERROR(f({a}), RuntimeUsageError, "called after its Runtime was destroyed");
  EXPECT_TRUE(array_equal(out.gather(), plus(Array::iota({4}, DType::kInt32), 1)));
}

// Outputs fed back as inputs: a loop of plan calls stays on the devices
// (no reshard, one miss then hits) and matches the host loop.
TEST(PlanTest, LoopOnShardedArraysStaysOnDevices) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  const ShardMapPlan step(
      rt, mesh.abstract_mesh(),
      [](DeviceContext& ctx, const Array& shard) { return plus(times(shard, 3), ctx.axis_index("x")); },
      {P{"x"}}, {P{"x"}});
  ShardedArray state = device_put(Array::iota({8}, DType::kInt32), NamedSharding(mesh, P{"x"}));
  Array reference = Array::iota({8}, DType::kInt32);
  for (int i = 0; i < 5; ++i) {
    state = step({state})[0];
    reference = times(reference, 3);
    for (int64_t e = 0; e < 8; ++e) {
      reference.set<int32_t>({e}, reference.at<int32_t>({e}) + static_cast<int32_t>(e / 2));
    }
  }
  EXPECT_TRUE(array_equal(state.gather(), reference)) << first_difference(state.gather(), reference);
  EXPECT_EQ(step.stats().misses, 1);
  EXPECT_EQ(step.stats().hits, 4);
  EXPECT_EQ(step.stats().reshards, 0);
}

// Replicated, partially replicated and multi-axis specs on an x=2, y=3
// mesh, several inputs and outputs: out0 = a + b elementwise, out1 = a
// passed through, compared with the host computation.
struct SpecCaseP {
  std::string name;
  PartitionSpec a, b;  // the plan's in/out spec; the spec b is put with
};

class PlanSpecTest : public ::testing::TestWithParam<SpecCaseP> {};

TEST_P(PlanSpecTest, TwoInputsTwoOutputsMatchHost) {
  const SpecCaseP& c = GetParam();
  Runtime rt(6);
  const Mesh mesh(AbstractMesh({{"x", 2}, {"y", 3}}), {5, 4, 3, 2, 1, 0});
  const Array a = Array::iota({12, 6}, DType::kInt32);
  const Array b = times(Array::iota({12, 6}, DType::kInt32), 100);
  const ShardMapPlan f(
      rt, mesh.abstract_mesh(),
      [](DeviceContext&, std::span<const Array> in) {
        Array sum = in[0].clone();
        auto s = sum.mutable_span<int32_t>();
        for (size_t i = 0; i < s.size(); ++i) s[i] += in[1].span<int32_t>()[i];
        return std::vector<Array>{sum, in[0]};
      },
      {c.a, c.a}, {c.a, c.a});
  // b arrives with its own spec; a matching one passes, another reshards.
  const auto outs =
      f({device_put(a, NamedSharding(mesh, c.a)), device_put(b, NamedSharding(mesh, c.b))});
  ASSERT_EQ(outs.size(), 2u);
  Array expected = a.clone();
  for (int64_t i = 0; i < 72; ++i) expected.mutable_span<int32_t>()[i] += b.span<int32_t>()[i];
  EXPECT_TRUE(array_equal(outs[0].gather(), expected)) << first_difference(outs[0].gather(), expected);
  EXPECT_TRUE(array_equal(outs[1].gather(), a));
  EXPECT_EQ(f.stats().reshards, c.a.normalized() == c.b.normalized() ? 0 : 1);
  EXPECT_EQ(outs[0].sharding(), NamedSharding(mesh, c.a));
  // And a second call is a hit.
  f({device_put(a, NamedSharding(mesh, c.a)), device_put(b, NamedSharding(mesh, c.a))});
  EXPECT_EQ(f.stats().hits, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, PlanSpecTest,
    ::testing::Values(SpecCaseP{"Replicated", P{}, P{}},
                      SpecCaseP{"PartiallyReplicatedX", P{"x"}, P{"x"}},
                      SpecCaseP{"PartiallyReplicatedY", P{nullptr, "y"}, P{nullptr, "y"}},
                      SpecCaseP{"TwoDims", P{"x", "y"}, P{"x", "y"}},
                      SpecCaseP{"MultiAxisDim", P{{"y", "x"}}, P{{"y", "x"}}},
                      SpecCaseP{"ReshardFromReplicated", P{{"x", "y"}}, P{}},
                      SpecCaseP{"ReshardTransposed", P{"y", "x"}, P{"x", "y"}}),
    [](const ::testing::TestParamInfo<SpecCaseP>& info) { return info.param.name; });

// A partially replicated out_spec whose replicas differ is a ReplicationError
// as in shard_map; with check_replication off the lowest position wins.
TEST(PlanTest, ReplicationCheckOnPartiallyReplicatedOutput) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  const auto body = [](DeviceContext& ctx, const Array& shard) {
    return plus(shard, ctx.axis_index("y"));
  };
  const ShardedArray a = device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x"}));
  const ShardMapPlan checked(rt, mesh.abstract_mesh(), body, {P{"x"}}, {P{"x"}});
  EXPECT_ERROR(checked({a}), ReplicationError,
               "shard_map output 0 (spec PartitionSpec('x')) is not replicated over mesh axis y: "
               "device 0 and device 1 differ");
  const ShardMapPlan unchecked(rt, mesh.abstract_mesh(), body, {P{"x"}}, {P{"x"}},
                               {.check_replication = false});
  EXPECT_TRUE(array_equal(unchecked({a})[0].gather(), Array::iota({4}, DType::kInt32)));
}

// Two host threads call one AbstractMesh plan on disjoint meshes (devices 0-1
// and 2-3) at once: every result is right, and the cache holds one entry.
TEST(PlanConcurrencyTest, OnePlanFromTwoThreadsOnDisjointMeshes) {
  Runtime rt(4);
  const ShardMapPlan f(
      rt, kX2, [](DeviceContext& ctx, const Array& shard) { return plus(shard, ctx.device_id()); },
      {P{"x"}}, {P{"x"}});
  constexpr int kCalls = 200;
  std::atomic<int> wrong{0};
  auto worker = [&](int first_device) {
    const Mesh mesh(kX2, {first_device, first_device + 1});
    const ShardedArray a = device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x"}));
    const Array expected = Array::from_values<int32_t>(
        {4}, {first_device, 1 + first_device, 3 + first_device, 4 + first_device});
    for (int i = 0; i < kCalls; ++i) {
      if (!array_equal(f({a})[0].gather(), expected)) ++wrong;
    }
  };
  std::thread t1(worker, 0), t2(worker, 2);
  t1.join();
  t2.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(f.stats().misses, 1);
  EXPECT_EQ(f.stats().hits, 2 * kCalls - 1);
}

// Outputs own their shards and layout: they outlive the plan.
TEST(PlanTest, OutputsOutliveThePlan) {
  Runtime rt(2);
  const Mesh mesh(kX2, {0, 1});
  ShardedArray out;
  {
    const ShardMapPlan f(
        rt, kX2, [](DeviceContext&, const Array& s) { return times(s, 5); }, {P{"x"}}, {P{"x"}});
    out = f({device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x"}))})[0];
  }
  EXPECT_TRUE(array_equal(out.gather(), Array::from_values<int32_t>({4}, {0, 5, 10, 15})));
}

TEST(PlanErrorTest, ArgumentsOnTwoDeviceSetsAreAMismatch) {
  Runtime rt(4);
  const ShardMapPlan f(
      rt, kX2, [](DeviceContext&, std::span<const Array> in) { return in[0]; }, {P{"x"}, P{"x"}},
      {P{"x"}});
  const Array x = Array::iota({4}, DType::kInt32);
  EXPECT_ERROR(f({device_put(x, NamedSharding(Mesh(kX2, {0, 1}), P{"x"})),
                  device_put(x, NamedSharding(Mesh(kX2, {2, 3}), P{"x"}))}),
               DeviceMismatchError, "input 1 lives on devices [2, 3]");
}

TEST(PlanErrorTest, ArgumentOnAMeshOfAnotherShape) {
  Runtime rt(4);
  const ShardMapPlan f(
      rt, kX2, [](DeviceContext&, const Array& s) { return s; }, {P{"x"}}, {P{"x"}});
  EXPECT_ERROR(
      f({device_put(Array::iota({4}, DType::kInt32), NamedSharding(Mesh::make({{"x", 4}}), P{"x"}))}),
      MeshError, "shard_map plan on AbstractMesh(x=2): no argument lives on a mesh of that shape");
}

TEST(PlanErrorTest, WrongArgumentCountAndNoArguments) {
  Runtime rt(2);
  const ShardMapPlan f(
      rt, kX2, [](DeviceContext&, const Array& s) { return s; }, {P{"x"}}, {P{"x"}});
  EXPECT_ERROR(f({}), InvalidArgumentError, "got 0 inputs but has 1 in_specs");
  const ShardMapPlan g(
      rt, kX2, [](DeviceContext& ctx, std::span<const Array>) { return Array::scalar(ctx.position()); },
      {}, {P{}});
  EXPECT_ERROR(g({}), InvalidArgumentError, "takes its devices from its arguments");
  // A concrete plan needs no arguments to know where to run.
  const ShardMapPlan h(
      rt, Mesh(kX2, {0, 1}),
      [](DeviceContext& ctx, std::span<const Array>) {
        return Array::from_values<int32_t>({1}, {ctx.position()});
      },
      {}, {P{"x"}});
  EXPECT_TRUE(array_equal(h({})[0].gather(), Array::from_values<int32_t>({2}, {0, 1})));
}

TEST(PlanErrorTest, BadSpecsFailAtConstruction) {
  Runtime rt(2);
  const auto id = [](DeviceContext&, const Array& s) { return s; };
  EXPECT_ERROR(ShardMapPlan(rt, kX2, id, {P{"z"}}, {P{"x"}}), UnknownAxisError,
               "shard_map input 0 (spec PartitionSpec('z'))");
  EXPECT_ERROR(ShardMapPlan(rt, kX2, id, {P{"x"}}, {P{"x", "x"}}), DuplicateAxisError,
               "shard_map output 0 (spec PartitionSpec('x', 'x'))");
}

TEST(PlanErrorTest, IndivisibleInputNamesIt) {
  Runtime rt(2);
  const Mesh mesh(kX2, {0, 1});
  const ShardMapPlan f(
      rt, kX2, [](DeviceContext&, const Array& s) { return s; }, {P{"x"}}, {P{"x"}});
  // Put replicated (any shape fits), then the plan's P('x') does not divide 3.
  EXPECT_ERROR(f({device_put(Array::iota({3}, DType::kInt32), NamedSharding(mesh, P{}))}),
               ShapeError, "shard_map input 0 (spec PartitionSpec('x')): cannot shard shape (3)");
  EXPECT_EQ(f.stats().misses, 0);
}

}  // namespace
}  // namespace meshsim::plan_test
