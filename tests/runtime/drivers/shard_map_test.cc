// shard_map: split / gather round trips for seeded random partition specs,
// checked against index math written here (which devices hold which global
// element), known answers for a JAX-style iota, the replication check, the
// no-copy path for unsharded inputs, and the errors.

#include "meshsim/runtime/drivers/shard_map.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/runtime.h"
#include "runtime/drivers/index_math.h"
#include "support/expect_error.h"

namespace meshsim::shard_map_test {
namespace {

using namespace testing_support;  // NOLINT: the reference index math
using AxisList = PartitionSpec::AxisList;

const MeshAxes kMeshes[] = {
    {{"x", 2}},
    {{"x", 4}, {"y", 2}},
    {{"a", 2}, {"b", 3}, {"c", 2}},
    {{"x", 2}, {"y", 2}, {"z", 2}},
};
constexpr int kSeeds = 8;

using RandomSpecParam = std::tuple<MeshAxes, int, int, bool>;  // mesh, rank, seed, large

class ShardMapRandomSpecTest : public ::testing::TestWithParam<RandomSpecParam> {
 protected:
  SpecCase make_case() const {
    const auto& [mesh, rank, seed, large] = GetParam();
    return random_case(mesh, rank, static_cast<uint32_t>(seed), large);
  }
};

// out_spec == in_spec with an identity body returns the input bit for bit,
// for element sizes 1, 2, 4 and 8.
TEST_P(ShardMapRandomSpecTest, IdentityRoundTripIsBitwise) {
  const SpecCase c = make_case();
  SCOPED_TRACE(describe(c));
  const DType dtypes[] = {DType::kUInt8, DType::kBFloat16, DType::kInt32, DType::kFloat64};
  Array input = Array::empty(c.shape, dtypes[c.seed % 4]);
  std::mt19937 rng(c.seed);
  for (std::byte& b : std::span(input.mutable_bytes(), input.nbytes())) b = std::byte(rng());
  const Mesh mesh = Mesh::make(c.mesh);
  Runtime rt(mesh.size());
  const Array out = shard_map(
      rt, mesh, [](DeviceContext&, const Array& shard) { return shard; }, c.spec, c.spec, input);
  EXPECT_TRUE(array_equal(out, input)) << first_difference(out, input);
}

// Every device's shard holds exactly the global elements of its blocks; a
// body returning shard + position gathers to input + (lowest position holding
// the element) with check_replication off, and with it on raises
// ReplicationError for the first replica pair iff the spec leaves an axis out.
TEST_P(ShardMapRandomSpecTest, ShardsAndGatherMatchIndexMath) {
  const SpecCase c = make_case();
  SCOPED_TRACE(describe(c));
  const int rank = static_cast<int>(c.shape.size());
  const int n = mesh_size(c.mesh);
  const auto blocks = blocks_per_position(c.mesh, c.spec, rank);
  Shape local = c.shape;
  for (int d = 0; d < c.spec.size(); ++d) local[d] /= parts_of(c.mesh, c.spec.entries()[d]);

  const Array input = Array::iota(c.shape, DType::kInt32);  // element = its flat index
  const Mesh mesh = Mesh::make(c.mesh);
  Runtime rt(n);
  std::vector<Array> shards(n);
  auto body = [&](DeviceContext& ctx, const Array& shard) {
    shards[ctx.position()] = shard;
    Array out = shard.clone();
    for (int32_t& v : out.mutable_span<int32_t>()) v += ctx.position();
    return out;
  };
  const Array out = shard_map(rt, mesh, body, c.spec, c.spec, input, {.check_replication = false});

  for (int p = 0; p < n; ++p) {
    const Array expected_shard = expected_iota_shard(c.mesh, c.spec, c.shape, p);
    EXPECT_TRUE(array_equal(shards[p], expected_shard))
        << "position " << p << ": " << first_difference(shards[p], expected_shard);
  }

  Array expected = Array::empty(c.shape, DType::kInt32);
  std::vector<int64_t> block(rank);
  for_each_index(c.shape, [&](const Shape& i, int64_t flat) {
    for (int d = 0; d < rank; ++d) block[d] = i[d] / local[d];
    int lowest = 0;
    while (blocks[lowest] != block) ++lowest;
    expected.mutable_span<int32_t>()[flat] = static_cast<int32_t>(flat + lowest);
  });
  EXPECT_TRUE(array_equal(out, expected)) << first_difference(out, expected);

  // The first position (in mesh order) that holds the same blocks as a lower
  // one, and the lowest such: the pair the replication check reports.
  int replica = -1, source = -1;
  for (int p = 0; p < n && replica < 0; ++p) {
    for (int q = 0; q < p; ++q) {
      if (blocks[q] == blocks[p]) {
        replica = p;
        source = q;
        break;
      }
    }
  }
  if (replica < 0) {
    EXPECT_TRUE(array_equal(shard_map(rt, mesh, body, c.spec, c.spec, input), expected));
  } else {
    EXPECT_ERROR(shard_map(rt, mesh, body, c.spec, c.spec, input), ReplicationError,
                 "device " + std::to_string(source) + " and device " + std::to_string(replica) +
                     " differ: first difference at index " + shape_to_string(Shape(rank, 0)));
  }
}

std::string random_spec_name(const ::testing::TestParamInfo<RandomSpecParam>& info) {
  const auto& [mesh, rank, seed, large] = info.param;
  std::string name;
  for (const auto& [axis, size] : mesh) name += axis + std::to_string(size);
  return name + "_rank" + std::to_string(rank) + "_seed" + std::to_string(seed);
}

INSTANTIATE_TEST_SUITE_P(Specs, ShardMapRandomSpecTest,
                         ::testing::Combine(::testing::ValuesIn(kMeshes), ::testing::Values(1, 2, 3),
                                            ::testing::Range(0, kSeeds), ::testing::Values(false)),
                         random_spec_name);
INSTANTIATE_TEST_SUITE_P(LargeSpecs, ShardMapRandomSpecTest,
                         ::testing::Combine(::testing::ValuesIn(kMeshes), ::testing::Values(1, 2, 3),
                                            ::testing::Range(0, 2), ::testing::Values(true)),
                         random_spec_name);

// The seeds above must produce every kind of spec entry, or the round trips
// test less than they claim.
TEST(ShardMapRandomSpecCoverage, EveryKindOfSpecIsGenerated) {
  int unsharded = 0, one_axis = 0, several_axes = 0, trailing_missing = 0, replicated = 0;
  for (const MeshAxes& mesh : kMeshes) {
    for (int rank = 1; rank <= 3; ++rank) {
      for (int seed = 0; seed < kSeeds; ++seed) {
        const SpecCase c = random_case(mesh, rank, seed, /*large=*/false);
        for (const AxisList& entry : c.spec.entries()) {
          unsharded += entry.empty();
          one_axis += entry.size() == 1;
          several_axes += entry.size() > 1;
        }
        trailing_missing += c.spec.size() < rank;
        replicated += c.spec.mentioned_axes().size() < mesh.size();
      }
    }
  }
  EXPECT_GT(unsharded, 0);
  EXPECT_GT(one_axis, 0);
  EXPECT_GT(several_axes, 0);
  EXPECT_GT(trailing_missing, 0);
  EXPECT_GT(replicated, 0);
}

// ---------------------------------------------------------------------------
// Known answers: iota(8, 8) on a mesh x=2, y=4 whose device ids run backwards,
// so the device at coordinates (1, 2) is position 6 and device 1.

struct IotaCase {
  std::string name;
  PartitionSpec spec;
  int64_t row_begin, row_end, col_begin, col_end;  // what device (1, 2) sees
};

void PrintTo(const IotaCase& c, std::ostream* os) { *os << c.name; }

class ShardMapIotaTest : public ::testing::TestWithParam<IotaCase> {};

TEST_P(ShardMapIotaTest, DeviceAtOneTwoSeesItsBlock) {
  const IotaCase& c = GetParam();
  const Mesh mesh(AbstractMesh({{"x", 2}, {"y", 4}}), {7, 6, 5, 4, 3, 2, 1, 0});
  Runtime rt(8);
  const Array input = Array::iota({8, 8}, DType::kInt32);
  Array seen;
  int seen_by = -1;
  const Array out = shard_map(
      rt, mesh,
      [&](DeviceContext& ctx, const Array& shard) {
        if (ctx.coords()[0] == 1 && ctx.coords()[1] == 2) {
          seen = shard;
          seen_by = ctx.device_id();
        }
        return shard;
      },
      c.spec, c.spec, input);
  std::vector<int32_t> values;
  for (int64_t r = c.row_begin; r < c.row_end; ++r) {
    for (int64_t col = c.col_begin; col < c.col_end; ++col) values.push_back(8 * r + col);
  }
  const Array expected = Array::from_values<int32_t>(
      {c.row_end - c.row_begin, c.col_end - c.col_begin}, values);
  EXPECT_EQ(seen_by, 1);
  EXPECT_TRUE(array_equal(seen, expected)) << seen;
  EXPECT_TRUE(array_equal(out, input)) << first_difference(out, input);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, ShardMapIotaTest,
    ::testing::Values(IotaCase{"RowsOverXColsOverY", P{"x", "y"}, 4, 8, 4, 6},
                      IotaCase{"RowsOverXThenY", P{{"x", "y"}}, 6, 7, 0, 8},
                      IotaCase{"RowsOverYThenX", P{{"y", "x"}}, 5, 6, 0, 8},
                      IotaCase{"ColsOverX", P{nullptr, "x"}, 0, 8, 4, 8},
                      IotaCase{"RowsOverY", P{"y"}, 4, 6, 0, 8},
                      IotaCase{"Replicated", P{}, 0, 8, 0, 8}),
    [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------
// Replication: on x=2, y=2, only mesh position 3 (x=1, y=1) returns a 1 at
// (1, 2) of its (2, 3) output; the others return zeros.

struct ReplicationCase {
  std::string name;
  PartitionSpec out_spec;
  int source;  // the position position 3 is compared with: the lowest with the same box
  std::string axes;  // the mesh axes along which `source` and position 3 differ
};

void PrintTo(const ReplicationCase& c, std::ostream* os) { *os << c.name; }

class ShardMapReplicationTest
    : public ::testing::TestWithParam<std::tuple<ReplicationCase, std::vector<int>>> {};

TEST_P(ShardMapReplicationTest, DifferingReplicasNameTheAxisBothDevicesAndTheIndex) {
  const auto& [c, ids] = GetParam();
  const Mesh mesh(AbstractMesh({{"x", 2}, {"y", 2}}), ids);
  Runtime rt(4);
  auto body = [](DeviceContext& ctx, const Array&) {
    Array out = Array::zeros({2, 3}, DType::kInt32);
    if (ctx.position() == 3) out.set<int32_t>({1, 2}, 1);
    return out;
  };
  EXPECT_ERROR(shard_map(rt, mesh, body, P{}, c.out_spec, Array::zeros({1}, DType::kInt32)),
               ReplicationError,
               "is not replicated over mesh " + c.axes + ": device " +
                   std::to_string(ids[c.source]) + " and device " + std::to_string(ids[3]) +
                   " differ: first difference at index (1, 2): 0 vs 1");
}

INSTANTIATE_TEST_SUITE_P(
    OutSpecs, ShardMapReplicationTest,
    ::testing::Combine(
        ::testing::Values(ReplicationCase{"ReplicatedEverywhere", P{}, 0, "axes x, y"},
                          ReplicationCase{"ShardedOverX", P{"x"}, 2, "axis y"},
                          ReplicationCase{"ShardedOverY", P{"y"}, 1, "axis x"},
                          ReplicationCase{"ColsOverY", P{nullptr, "y"}, 1, "axis x"}),
        ::testing::Values(std::vector<int>{0, 1, 2, 3}, std::vector<int>{3, 2, 1, 0})),
    [](const auto& info) {
      return std::get<0>(info.param).name +
             (std::get<1>(info.param)[0] == 0 ? "_DefaultIds" : "_ReversedIds");
    });

// With check_replication off, each box comes from the lowest mesh position
// holding it. Every position returns its own number, so the result shows who won.
TEST(ShardMapReplicationTest, UncheckedTakesTheLowestPositionsCopy) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  Runtime rt(4);
  auto body = [](DeviceContext& ctx, const Array&) {
    return Array::full({1, 2}, DType::kInt32, ctx.position());
  };
  const Array in = Array::zeros({1}, DType::kInt32);
  const ShardMapOptions unchecked{.check_replication = false};
  const std::pair<PartitionSpec, Array> cases[] = {
      {P{}, Array::from_values<int32_t>({1, 2}, {0, 0})},
      {P{"x"}, Array::from_values<int32_t>({2, 2}, {0, 0, 2, 2})},
      {P{nullptr, "y"}, Array::from_values<int32_t>({1, 4}, {0, 0, 1, 1})},
      {P{{"y", "x"}}, Array::from_values<int32_t>({4, 2}, {0, 0, 2, 2, 1, 1, 3, 3})},
  };
  for (const auto& [out_spec, expected] : cases) {
    const Array out = shard_map(rt, mesh, body, P{}, out_spec, in, unchecked);
    EXPECT_TRUE(array_equal(out, expected)) << out_spec << ": " << out;
  }
}

TEST(ShardMapReplicationTest, IdenticalReplicasPass) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 3}});
  Runtime rt(6);
  const Array in = Array::zeros({1}, DType::kInt32);
  const Array out = shard_map(
      rt, mesh,
      [](DeviceContext& ctx, const Array&) {
        return Array::full({2}, DType::kFloat32, 10 * ctx.axis_index("x"));
      },
      P{}, P{"x"}, in);
  EXPECT_TRUE(array_equal(out, Array::from_values<float>({4}, {0, 0, 10, 10}))) << out;
  const Array same = shard_map(
      rt, mesh, [](DeviceContext&, const Array&) { return Array::full({3}, DType::kInt8, 7); },
      P{}, P{}, in);
  EXPECT_TRUE(array_equal(same, Array::full({3}, DType::kInt8, 7))) << same;
}

// The check is bitwise: 0.0 and -0.0 compare equal but are not replicas.
TEST(ShardMapReplicationTest, SignedZerosAreNotReplicas) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  Runtime rt(2);
  EXPECT_ERROR(shard_map(
                   rt, mesh,
                   [](DeviceContext& ctx, const Array&) {
                     return Array::full({1}, DType::kFloat32, ctx.position() == 0 ? 0.0 : -0.0);
                   },
                   P{}, P{}, Array::zeros({1}, DType::kInt32)),
               ReplicationError, "device 0 and device 1 differ: first difference at index (0): 0 vs -0");
}

// ---------------------------------------------------------------------------
// An input its spec does not shard reaches every device without a copy.

TEST(ShardMapTest, UnshardedInputsAreNotCopied) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  Runtime rt(4);
  const std::vector<Array> inputs = {Array::iota({4, 2}, DType::kFloat32),
                                     Array::iota({4, 2}, DType::kFloat32),
                                     Array::iota({4, 2}, DType::kFloat32)};
  const std::vector<PartitionSpec> in_specs = {P{}, P{nullptr, nullptr}, P{"x"}};
  std::vector<std::vector<char>> shared(4);
  shard_map(
      rt, mesh,
      [&](DeviceContext& ctx, std::span<const Array> shards) {
        for (size_t i = 0; i < shards.size(); ++i) {
          shared[ctx.position()].push_back(shards[i].shares_storage_with(inputs[i]));
        }
        return std::vector<Array>{};
      },
      in_specs, {}, inputs);
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(shared[p], (std::vector<char>{1, 1, 0})) << "position " << p;
  }
}

// Several inputs and outputs of different dtypes travel together, in order.
TEST(ShardMapTest, SeveralInputsAndOutputs) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  Runtime rt(4);
  const std::vector<Array> inputs = {Array::iota({4, 2}, DType::kInt32),
                                     Array::from_values<double>({2}, {0.5, 1.5})};
  const std::vector<PartitionSpec> in_specs = {P{"x", "y"}, P{"y"}};
  const std::vector<PartitionSpec> out_specs = {P{"y", "x"}, P{"y"}, P{}};
  const auto outs = shard_map(
      rt, mesh,
      [](DeviceContext&, std::span<const Array> s) {
        // s[0] is (2, 1), s[1] is (1): the block laid out as a row, the
        // second input as it came, and a constant.
        return std::vector<Array>{s[0].reshape({1, 2}), s[1], Array::scalar(int8_t{3})};
      },
      in_specs, out_specs, inputs);
  ASSERT_EQ(outs.size(), 3u);
  // Device (x, y) holds column y of rows 2x..2x+1 and writes it as row y,
  // columns 2x..2x+1: the transpose of the global array.
  EXPECT_TRUE(array_equal(outs[0], Array::from_values<int32_t>({2, 4}, {0, 2, 4, 6, 1, 3, 5, 7})))
      << outs[0];
  EXPECT_TRUE(array_equal(outs[1], inputs[1])) << outs[1];
  EXPECT_TRUE(array_equal(outs[2], Array::scalar(int8_t{3}))) << outs[2];
}

// ---------------------------------------------------------------------------
// Errors.

TEST(ShardMapErrorTest, IndivisibleDimensionNamesInputDimensionAndSpec) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 4}});
  Runtime rt(8);
  const std::vector<Array> inputs = {Array::zeros({4, 4}, DType::kFloat32),
                                     Array::zeros({2, 6}, DType::kFloat32)};
  const std::vector<PartitionSpec> in_specs = {P{"x", "y"}, P{nullptr, "y"}};
  auto body = [](DeviceContext&, std::span<const Array>) { return std::vector<Array>{}; };
  EXPECT_ERROR(shard_map(rt, mesh, body, in_specs, {}, inputs), ShapeError,
               "shard_map input 1 (spec PartitionSpec(None, 'y')): cannot shard shape (2, 6)");
  EXPECT_ERROR(shard_map(rt, mesh, body, in_specs, {}, inputs), ShapeError,
               "dimension 1 of size 6 is not divisible by 4");
}

struct BadSpecCase {
  std::string name;
  PartitionSpec spec;
  std::string needle;
};

void PrintTo(const BadSpecCase& c, std::ostream* os) { *os << c.name; }

class ShardMapBadSpecTest : public ::testing::TestWithParam<BadSpecCase> {};

TEST_P(ShardMapBadSpecTest, BadInSpecIsAnErrorNamingTheInput) {
  const BadSpecCase& c = GetParam();
  Runtime rt(4);
  EXPECT_ERROR(shard_map(
                   rt, Mesh::make({{"x", 2}, {"y", 2}}),
                   [](DeviceContext&, const Array& s) { return s; }, c.spec, P{},
                   Array::zeros({4}, DType::kFloat32)),
               InvalidArgumentError, "shard_map input 0 (spec " + c.spec.to_string() + "): " + c.needle);
}

TEST_P(ShardMapBadSpecTest, BadOutSpecIsAnErrorNamingTheOutput) {
  const BadSpecCase& c = GetParam();
  Runtime rt(4);
  EXPECT_ERROR(shard_map(
                   rt, Mesh::make({{"x", 2}, {"y", 2}}),
                   [](DeviceContext&, const Array& s) { return s; }, P{}, c.spec,
                   Array::zeros({4}, DType::kFloat32)),
               InvalidArgumentError, "shard_map output 0 (spec " + c.spec.to_string() + "): " + c.needle);
}

INSTANTIATE_TEST_SUITE_P(
    Specs, ShardMapBadSpecTest,
    ::testing::Values(
        BadSpecCase{"UnknownAxis", P{"z"}, "unknown axis 'z'"},
        BadSpecCase{"UnknownAxisAmongSeveral", P{{"x", "w"}}, "unknown axis 'w'"},
        BadSpecCase{"AxisTwice", P{{"x", "x"}}, "axis 'x' is used twice"},
        BadSpecCase{"LongerThanRank", P{"x", nullptr},
                    "PartitionSpec('x', None) has 2 entries but the array has rank 1"}),
    [](const auto& info) { return info.param.name; });

TEST(ShardMapErrorTest, WrongNumberOfInSpecs) {
  Runtime rt(2);
  const std::vector<Array> inputs = {Array::zeros({2}, DType::kFloat32),
                                     Array::zeros({2}, DType::kFloat32)};
  const std::vector<PartitionSpec> in_specs = {P{"x"}};
  EXPECT_ERROR(shard_map(
                   rt, Mesh::make({{"x", 2}}),
                   [](DeviceContext&, std::span<const Array>) { return std::vector<Array>{}; },
                   in_specs, {}, inputs),
               InvalidArgumentError, "shard_map got 2 inputs but 1 in_specs");
}

TEST(ShardMapErrorTest, DevicesReturningDifferentShapesAreNamed) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  const Array in = Array::zeros({4}, DType::kFloat32);
  EXPECT_ERROR(shard_map(
                   rt, mesh,
                   [](DeviceContext& ctx, const Array&) {
                     return Array::zeros({ctx.device_id() == 3 ? 2 : 1}, DType::kFloat32);
                   },
                   P{"x"}, P{"x"}, in),
               ShapeError,
               "shard_map output 0: device 0 returned float32(1) but device 3 returned float32(2)");
  EXPECT_ERROR(shard_map(
                   rt, mesh,
                   [](DeviceContext& ctx, const Array&) {
                     return Array::zeros({1}, ctx.device_id() == 2 ? DType::kInt32 : DType::kFloat32);
                   },
                   P{"x"}, P{"x"}, in),
               ShapeError,
               "shard_map output 0: device 0 returned float32(1) but device 2 returned int32(1)");
}

TEST(ShardMapErrorTest, WrongNumberOfOutputsNamesTheDevice) {
  Runtime rt(4);
  const std::vector<Array> inputs = {Array::zeros({4}, DType::kFloat32)};
  const std::vector<PartitionSpec> in_specs = {P{"x"}}, out_specs = {P{"x"}};
  EXPECT_ERROR(shard_map(
                   rt, Mesh::make({{"x", 4}}),
                   [](DeviceContext& ctx, std::span<const Array> s) {
                     std::vector<Array> out = {s[0]};
                     if (ctx.device_id() == 2) out.push_back(s[0]);
                     return out;
                   },
                   in_specs, out_specs, inputs),
               InvalidArgumentError,
               "shard_map: device 2 returned 2 outputs but there are 1 out_specs");
}

// An out_spec naming an axis the mesh lacks is found before any device runs.
TEST(ShardMapErrorTest, UnknownOutSpecAxisFailsBeforeRunning) {
  Runtime rt(2);
  std::atomic<int> runs{0};
  EXPECT_THROW(shard_map(
                   rt, Mesh::make({{"x", 2}}),
                   [&](DeviceContext&, const Array& s) {
                     ++runs;
                     return s;
                   },
                   P{"x"}, P{"z"}, Array::zeros({2}, DType::kFloat32)),
               InvalidArgumentError);
  EXPECT_EQ(runs.load(), 0);
}

}  // namespace
}  // namespace meshsim::shard_map_test
