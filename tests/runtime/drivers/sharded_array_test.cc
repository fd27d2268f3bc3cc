// ShardedArray and device_put: shards checked against the reference index
// math for seeded random specs on 1-, 2- and 3-axis meshes (with device ids
// out of order, so shard(device) must map device -> position), gather()
// round trips, the no-copy path for replicated specs, lifetime and errors.

#include "meshsim/runtime/drivers/sharded_array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/mesh/sharding.h"
#include "meshsim/runtime/array/array.h"
#include "runtime/drivers/index_math.h"
#include "support/expect_error.h"

namespace meshsim::sharded_array_test {
namespace {

using namespace testing_support;  // NOLINT: the reference index math

// Device ids a permutation of 0..n-1 shifted by 10, so a position is never
// its device id.
Mesh shuffled_mesh(const MeshAxes& axes, uint32_t seed) {
  std::vector<int> ids(mesh_size(axes));
  std::iota(ids.begin(), ids.end(), 10);
  std::mt19937 rng(seed);
  std::shuffle(ids.begin(), ids.end(), rng);
  return Mesh(AbstractMesh(axes), ids);
}

const MeshAxes kMeshes[] = {
    {{"x", 4}},
    {{"x", 2}, {"y", 3}},
    {{"a", 2}, {"b", 2}, {"c", 2}},
};

using Param = std::tuple<MeshAxes, int, int>;  // mesh, rank, seed

class DevicePutRandomSpecTest : public ::testing::TestWithParam<Param> {};

TEST_P(DevicePutRandomSpecTest, ShardsMatchIndexMathAndGatherRoundTrips) {
  const auto& [axes, rank, seed] = GetParam();
  const SpecCase c = random_case(axes, rank, static_cast<uint32_t>(seed), /*large=*/false);
  SCOPED_TRACE(describe(c));
  const Mesh mesh = shuffled_mesh(axes, seed);
  const Array input = Array::iota(c.shape, DType::kInt32);
  const NamedSharding sharding(mesh, c.spec);
  const ShardedArray sharded = device_put(input, sharding);

  EXPECT_EQ(sharded.sharding(), sharding);
  EXPECT_EQ(sharded.shape(), c.shape);
  EXPECT_EQ(sharded.dtype(), DType::kInt32);
  ASSERT_EQ(sharded.shards().size(), static_cast<size_t>(mesh.size()));
  for (int p = 0; p < mesh.size(); ++p) {
    const int device = mesh.device_at(p);
    const Array expected = expected_iota_shard(c.mesh, c.spec, c.shape, p);
    EXPECT_TRUE(array_equal(sharded.shard(device), expected))
        << "device " << device << " (position " << p << "): "
        << first_difference(sharded.shard(device), expected);
    EXPECT_EQ(sharded.shard(device).shape(), sharding.shard_shape(c.shape));
  }
  const Array back = sharded.gather();
  EXPECT_TRUE(array_equal(back, input)) << first_difference(back, input);
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [axes, rank, seed] = info.param;
  std::string name;
  for (const auto& [axis, size] : axes) name += axis + std::to_string(size);
  return name + "_rank" + std::to_string(rank) + "_seed" + std::to_string(seed);
}

INSTANTIATE_TEST_SUITE_P(Specs, DevicePutRandomSpecTest,
                         ::testing::Combine(::testing::ValuesIn(kMeshes),
                                            ::testing::Values(1, 2, 3), ::testing::Range(0, 6)),
                         param_name);

// Every element size and a large (parallel-copy) array round trip bitwise.
TEST(DevicePutTest, LargeRoundTripIsBitwiseForEveryElementSize) {
  const Mesh mesh = shuffled_mesh({{"x", 2}, {"y", 4}}, 3);
  for (DType dtype : {DType::kUInt8, DType::kBFloat16, DType::kInt32, DType::kFloat64}) {
    Array input = Array::empty({512, 8, 96}, dtype);
    std::mt19937 rng(7);
    for (std::byte& b : std::span(input.mutable_bytes(), input.nbytes())) b = std::byte(rng());
    const ShardedArray sharded = device_put(input, NamedSharding(mesh, P{"y", nullptr, "x"}));
    EXPECT_EQ(sharded.shard(mesh.device_at(0)).shape(), (Shape{128, 8, 48}));
    EXPECT_TRUE(array_equal(sharded.gather(), input)) << dtype_name(dtype);
  }
}

// A spec that shards nothing puts the host array's storage on every device.
TEST(DevicePutTest, ReplicatedSpecSharesTheHostStorage) {
  const Mesh mesh(AbstractMesh({{"x", 2}, {"y", 2}}), {3, 2, 1, 0});
  const Array input = Array::iota({4, 6}, DType::kFloat32);
  const ShardedArray sharded = device_put(input, NamedSharding(mesh, P{}));
  for (int device = 0; device < 4; ++device) {
    EXPECT_TRUE(sharded.shard(device).shares_storage_with(input)) << "device " << device;
  }
  EXPECT_TRUE(sharded.gather().shares_storage_with(input));
}

// Partially replicated: P{"x"} on x=2, y=2 gives devices that differ only in
// y the same rows; known answer on iota(4, 2).
TEST(DevicePutTest, PartiallyReplicatedKnownAnswer) {
  const Mesh mesh(AbstractMesh({{"x", 2}, {"y", 2}}), {4, 5, 6, 7});
  const ShardedArray sharded =
      device_put(Array::iota({4, 2}, DType::kInt32), NamedSharding(mesh, P{"x"}));
  const Array top = Array::from_values<int32_t>({2, 2}, {0, 1, 2, 3});
  const Array bottom = Array::from_values<int32_t>({2, 2}, {4, 5, 6, 7});
  EXPECT_TRUE(array_equal(sharded.shard(4), top));
  EXPECT_TRUE(array_equal(sharded.shard(5), top));
  EXPECT_TRUE(array_equal(sharded.shard(6), bottom));
  EXPECT_TRUE(array_equal(sharded.shard(7), bottom));
  EXPECT_EQ(sharded.to_string(),
            "ShardedArray(int32(4, 2), NamedSharding(mesh=Mesh(x=2, y=2; devices=[4, 5, 6, 7]), "
            "spec=PartitionSpec('x')))");
}

// A shard obtained from a ShardedArray keeps its data alive after the last
// ShardedArray is gone, and writing to it does not change the ShardedArray.
TEST(DevicePutTest, ShardsAreSharedImmutableAndOutliveTheHandle) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  Array kept;
  {
    const ShardedArray sharded =
        device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x"}));
    const ShardedArray copy = sharded;
    EXPECT_TRUE(copy.shard(1).shares_storage_with(sharded.shard(1)));
    kept = sharded.shard(1);
    Array written = copy.shard(0);
    written.set<int32_t>({0}, 99);
    EXPECT_EQ(sharded.shard(0).at<int32_t>({0}), 0);
  }
  EXPECT_TRUE(array_equal(kept, Array::from_values<int32_t>({2}, {2, 3})));
}

TEST(DevicePutErrorTest, IndivisibleShapeNamesSpecAndDimension) {
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(device_put(Array::iota({6}, DType::kInt32), NamedSharding(mesh, P{"x"})),
               ShapeError, "device_put (spec PartitionSpec('x')): cannot shard shape (6)");
}

TEST(DevicePutErrorTest, SpecLongerThanRank) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  EXPECT_ERROR(device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x", "y"})),
               SpecError, "device_put (spec PartitionSpec('x', 'y'))");
}

TEST(DevicePutErrorTest, ShardOfADeviceOutsideTheMeshNamesIt) {
  const Mesh mesh(AbstractMesh({{"x", 2}}), {2, 3});
  const ShardedArray sharded =
      device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x"}));
  EXPECT_ERROR(sharded.shard(0), MeshError, "device 0");
}

TEST(DevicePutErrorTest, DefaultConstructedIsAnError) {
  const ShardedArray empty;
  EXPECT_ERROR(empty.shape(), InvalidArgumentError, "default-constructed");
  EXPECT_EQ(empty.to_string(), "ShardedArray()");
}

}  // namespace
}  // namespace meshsim::sharded_array_test
