#include "meshsim/mesh/sharding.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::sharding_test {
namespace {

using Shape = std::vector<int64_t>;

// Expects `stmt` to throw `Type` whose what() contains `needle`.

// An (8, 8) array on (x=2, y=4), where position p = x*4 + y.
struct BoxCase {
  PartitionSpec spec;
  Shape shard;
  std::vector<std::vector<int64_t>> starts;  // starts[d][p]
};

const std::vector<int64_t> kAll = {0, 0, 0, 0, 0, 0, 0, 0};
const std::vector<int64_t> kByX = {0, 0, 0, 0, 4, 4, 4, 4};  // x*4

const BoxCase kBoxCases[] = {
    {P{}, {8, 8}, {kAll, kAll}},
    {P{"x"}, {4, 8}, {kByX, kAll}},
    {P{nullptr, "y"}, {8, 2}, {kAll, {0, 2, 4, 6, 0, 2, 4, 6}}},         // y*2
    {P{{"x", "y"}}, {1, 8}, {{0, 1, 2, 3, 4, 5, 6, 7}, kAll}},           // x*4 + y
    {P{{"y", "x"}}, {1, 8}, {{0, 2, 4, 6, 1, 3, 5, 7}, kAll}},           // y*2 + x
    {P{"x", "y"}, {4, 2}, {kByX, {0, 2, 4, 6, 0, 2, 4, 6}}},             // x*4, y*2
    {P{"y", "x"}, {2, 4}, {{0, 2, 4, 6, 0, 2, 4, 6}, kByX}},             // y*2, x*4
    {P{nullptr, {"y", "x"}}, {8, 1}, {kAll, {0, 2, 4, 6, 1, 3, 5, 7}}},  // y*2 + x
};

class ShardBoxTest : public ::testing::TestWithParam<std::tuple<BoxCase, int>> {};

TEST_P(ShardBoxTest, KnownBox) {
  const auto& [c, position] = GetParam();
  const AbstractMesh mesh({{"x", 2}, {"y", 4}});
  const Shape global = {8, 8};
  EXPECT_EQ(shard_shape(mesh, c.spec, global), c.shard);
  const std::vector<DimSlice> expected = {{c.starts[0][position], c.shard[0]},
                                          {c.starts[1][position], c.shard[1]}};
  EXPECT_EQ(shard_slice(mesh, c.spec, global, position), expected) << c.spec;
}

INSTANTIATE_TEST_SUITE_P(Specs, ShardBoxTest,
                         ::testing::Combine(::testing::ValuesIn(kBoxCases),
                                            ::testing::Range(0, 8)));

// A random valid spec for `mesh` over a random rank-1..3 shape whose sharded
// dims are divisible.
std::pair<PartitionSpec, Shape> random_case(const AbstractMesh& mesh, std::mt19937& rng) {
  const int rank = std::uniform_int_distribution<int>(1, 3)(rng);
  std::vector<PartitionSpec::AxisList> entries(rank);
  Shape shape(rank);
  for (auto& n : shape) n = std::uniform_int_distribution<int>(1, 3)(rng);
  std::vector<std::string> axes = mesh.axis_names();
  std::shuffle(axes.begin(), axes.end(), rng);
  for (const std::string& axis : axes) {
    if (rng() % 2 == 0) continue;  // replicated over this axis
    const int d = std::uniform_int_distribution<int>(0, rank - 1)(rng);
    entries[d].push_back(axis);
    shape[d] *= mesh.axis_size(axis);
  }
  // Sometimes drop trailing unsharded entries.
  while (!entries.empty() && entries.back().empty() && rng() % 2 == 0) entries.pop_back();
  return {PartitionSpec(std::move(entries)), shape};
}

class TilingTest : public ::testing::TestWithParam<std::vector<std::pair<std::string, int>>> {};

// Every element is held by exactly (product of replicated axis sizes)
// positions, and every box has the shard shape.
TEST_P(TilingTest, SlicesCoverEachElementOncePerReplica) {
  const AbstractMesh mesh(GetParam());
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 100; ++trial) {
    const auto [spec, shape] = random_case(mesh, rng);
    SCOPED_TRACE(spec.to_string() + " on " + mesh.to_string());
    int replicas = 1;
    const auto used = spec.mentioned_axes();
    for (const std::string& axis : mesh.axis_names()) {
      if (std::find(used.begin(), used.end(), axis) == used.end()) replicas *= mesh.axis_size(axis);
    }
    const Shape shard = shard_shape(mesh, spec, shape);
    int64_t total = 1;
    for (int64_t n : shape) total *= n;
    std::vector<int> count(total, 0);
    for (int p = 0; p < mesh.size(); ++p) {
      const std::vector<DimSlice> box = shard_slice(mesh, spec, shape, p);
      ASSERT_EQ(box.size(), shape.size());
      for (size_t d = 0; d < box.size(); ++d) ASSERT_EQ(box[d].size, shard[d]);
      std::vector<int64_t> idx(box.size());  // odometer over the box
      for (size_t d = 0; d < box.size(); ++d) idx[d] = box[d].start;
      while (true) {
        int64_t flat = 0;
        for (size_t d = 0; d < idx.size(); ++d) flat = flat * shape[d] + idx[d];
        ++count[flat];
        size_t d = idx.size();
        while (d > 0 && ++idx[d - 1] == box[d - 1].start + box[d - 1].size) {
          idx[d - 1] = box[d - 1].start;
          --d;
        }
        if (d == 0) break;
      }
    }
    ASSERT_EQ(count, std::vector<int>(total, replicas));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, TilingTest,
    ::testing::Values(std::vector<std::pair<std::string, int>>{{"x", 6}},
                      std::vector<std::pair<std::string, int>>{{"x", 2}, {"y", 4}},
                      std::vector<std::pair<std::string, int>>{{"a", 2}, {"b", 3}, {"c", 2}},
                      std::vector<std::pair<std::string, int>>{
                          {"a", 1}, {"b", 2}, {"c", 3}, {"d", 2}}));

TEST(NamedShardingTest, DevicesAndReplicas) {
  // Devices placed in reverse: device 5 sits at position 2, i.e. x=1, y=0.
  const NamedSharding sharding(Mesh(AbstractMesh({{"x", 2}, {"y", 2}}), {7, 6, 5, 4}), P{"x"});
  const Shape global = {4, 6};
  EXPECT_EQ(sharding.shard_shape(global), (Shape{2, 6}));
  EXPECT_EQ(sharding.device_slice(global, 5), (std::vector<DimSlice>{{2, 2}, {0, 6}}));
  EXPECT_EQ(sharding.device_slice(global, 7), (std::vector<DimSlice>{{0, 2}, {0, 6}}));
  EXPECT_EQ(sharding.replicated_axes(), (std::vector<std::string>{"y"}));
  EXPECT_EQ(sharding.to_string(),
            "NamedSharding(mesh=Mesh(x=2, y=2; devices=[7, 6, 5, 4]), spec=PartitionSpec('x'))");
}

TEST(NamedShardingTest, ReplicatedAxesInMeshOrder) {
  const Mesh mesh = Mesh::make({{"a", 2}, {"b", 2}, {"c", 2}});
  EXPECT_EQ(NamedSharding(mesh, P{}).replicated_axes(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(NamedSharding(mesh, P{nullptr, "b"}).replicated_axes(),
            (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(NamedSharding(mesh, P{{"c", "a", "b"}}).replicated_axes(), std::vector<std::string>{});
}

TEST(NamedShardingTest, EqualityIgnoresTrailingUnshardedEntries) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  EXPECT_EQ(NamedSharding(mesh, P{"x"}), NamedSharding(mesh, P{"x", nullptr}));
  EXPECT_NE(NamedSharding(mesh, P{"x"}), NamedSharding(mesh, P{nullptr, "x"}));
  EXPECT_NE(NamedSharding(mesh, P{"x"}),
            NamedSharding(Mesh(AbstractMesh({{"x", 2}}), {1, 0}), P{"x"}));
}

TEST(ShardingErrorTest, NotDivisible) {
  const AbstractMesh mesh({{"x", 2}, {"y", 4}});
  EXPECT_ERROR(shard_shape(mesh, P{nullptr, "y"}, Shape{8, 6}), ShapeError,
               "cannot shard shape (8, 6) by PartitionSpec(None, 'y') on AbstractMesh(x=2, y=4): "
               "dimension 1 of size 6 is not divisible by 4, the product of the sizes of axes 'y'");
  EXPECT_ERROR(shard_slice(mesh, P{{"x", "y"}}, Shape{12}, 0), ShapeError,
               "not divisible by 8, the product of the sizes of axes ('x', 'y')");
}

TEST(ShardingErrorTest, NegativeDimension) {
  const AbstractMesh mesh({{"x", 2}});
  EXPECT_ERROR(shard_shape(mesh, P{}, Shape{4, -2}), ShapeError,
               "dimension 1 has negative size -2");
}

TEST(ShardingErrorTest, SpecLongerThanRank) {
  const AbstractMesh mesh({{"x", 2}, {"y", 4}});
  EXPECT_ERROR(shard_shape(mesh, P{"x", nullptr, "y"}, Shape{8, 8}), SpecError,
               "has 3 entries but the array has rank 2");
  const NamedSharding sharding(Mesh(mesh), P{"x", "y"});
  EXPECT_ERROR(sharding.shard_shape(Shape{8}), SpecError, "PartitionSpec('x', 'y') has 2 entries");
}

TEST(ShardingErrorTest, UnknownAxis) {
  EXPECT_ERROR(NamedSharding(Mesh::make({{"x", 2}}), P{"z"}), UnknownAxisError,
               "unknown axis 'z' in PartitionSpec('z'); mesh axes are (x=2)");
  EXPECT_ERROR(shard_shape(AbstractMesh({{"x", 2}}), P{nullptr, "w"}, Shape{2, 2}),
               UnknownAxisError,
               "'w'");
}

TEST(ShardingErrorTest, AxisTwice) {
  EXPECT_ERROR(NamedSharding(Mesh::make({{"x", 2}, {"y", 2}}), P{"x", {"y", "x"}}),
               DuplicateAxisError,
               "axis 'x' is used twice");
}

TEST(ShardingErrorTest, DeviceNotInMesh) {
  const NamedSharding sharding(Mesh(AbstractMesh({{"x", 2}}), {3, 4}), P{"x"});
  EXPECT_ERROR(sharding.device_slice(Shape{4}, 0), MeshError, "device 0 is not in");
}

TEST(ShardingErrorTest, PositionOutOfRange) {
  const AbstractMesh mesh({{"x", 2}, {"y", 4}});
  EXPECT_ERROR(shard_slice(mesh, P{}, Shape{8}, 8), InvalidArgumentError, "position 8");
}

}  // namespace
}  // namespace meshsim::sharding_test
