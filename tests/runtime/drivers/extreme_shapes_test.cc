// shard_map and pmap at the edges of shapes: zero-size inputs and outputs
// (split, gather and the replication check touch no null pointer; run under
// ASan + UBSan), global output shapes that overflow int64, and a mapped
// dimension larger than the runtime: each a ShapeError naming the shape.

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/drivers/pmap.h"
#include "meshsim/runtime/drivers/shard_map.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/runtime.h"
#include "support/expect_error.h"

namespace meshsim::extreme_shapes_test {
namespace {

using P = PartitionSpec;

const auto identity = [](DeviceContext&, const Array& shard) { return shard; };

TEST(ZeroSizeShardMapTest, ShardedRowsOfNoColumnsRoundTrip) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  Runtime rt(4);
  const Array input = Array::zeros({4, 0}, DType::kFloat32);
  std::vector<Shape> seen(4);
  const Array out = shard_map(
      rt, mesh,
      [&](DeviceContext& ctx, const Array& shard) {
        seen[ctx.position()] = shard.shape();
        return shard;
      },
      P{"x"}, P{"x"}, input);
  EXPECT_EQ(out.shape(), (Shape{4, 0}));
  EXPECT_EQ(out.dtype(), DType::kFloat32);
  for (const Shape& shape : seen) EXPECT_EQ(shape, (Shape{2, 0}));
}

TEST(ZeroSizeShardMapTest, ZeroRowsShardedOverBothAxes) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  Runtime rt(4);
  const Array out = shard_map(rt, mesh, identity, P{nullptr, {"x", "y"}}, P{nullptr, {"x", "y"}},
                              Array::zeros({0, 8}, DType::kInt32));
  EXPECT_EQ(out.shape(), (Shape{0, 8}));
}

// Every output is replicated over y: the check compares zero-size replicas.
TEST(ZeroSizeShardMapTest, ReplicatedZeroSizeOutputsPassTheCheck) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 2}});
  Runtime rt(4);
  const std::vector<Array> out =
      shard_map(rt, mesh,
                [](DeviceContext&, std::span<const Array>) {
                  return std::vector<Array>{Array::zeros({0}, DType::kInt32),
                                            Array::zeros({3, 0}, DType::kFloat64)};
                },
                {P{}}, {P{}, P{"x"}}, {Array::zeros({0}, DType::kInt32)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{0}));
  EXPECT_EQ(out[1].shape(), (Shape{6, 0}));
}

TEST(ZeroSizePmapTest, MapsRowsOfNoColumns) {
  Runtime rt(3);
  const std::vector<Array> out =
      pmap(rt, [](DeviceContext&, std::span<const Array> s) { return s[0]; }, "i",
           {Array::zeros({3, 0}, DType::kInt32)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 0}));
}

// 2^62 + 1 columns times 4 devices wraps to 4 in int64.
TEST(ExtremeShapeTest, GlobalOutputShapeOverflowIsAShapeErrorNamingTheShape) {
  const Mesh mesh = Mesh::make({{"x", 4}});
  Runtime rt(4);
  const int64_t huge = (int64_t{1} << 62) + 1;
  const P columns_over_x{nullptr, "x"};
  const auto body = [&](DeviceContext&, const Array&) {
    return Array::zeros({0, huge}, DType::kInt8);
  };
  const Array input = Array::zeros({1}, DType::kInt8);
  EXPECT_ERROR(shard_map(rt, mesh, body, P{}, columns_over_x, input), ShapeError,
               "shard_map output 0 (spec " + columns_over_x.to_string() +
                   "): the local shape (0, 4611686018427387905) times 4 devices in dimension 1 "
                   "overflows int64");
}

TEST(ExtremeShapeTest, PmapOverMoreDevicesThanTheRuntimeHasIsAShapeError) {
  Runtime rt(2);
  const int64_t huge = int64_t{1} << 40;
  const auto body = [](DeviceContext&, std::span<const Array> s) { return s[0]; };
  const std::vector<Array> inputs = {Array::zeros({huge, 0}, DType::kInt32)};
  EXPECT_ERROR(pmap(rt, body, "i", inputs), ShapeError,
               "pmap: input 0 of shape (1099511627776, 0) maps a dimension of size "
               "1099511627776 but the runtime has 2 devices");
}

}  // namespace
}  // namespace meshsim::extreme_shapes_test
