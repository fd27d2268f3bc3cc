// Arrays of rank 7 and 9, past Shape's 6 inline dims (its heap path) and, at
// 9, past what a stored collective call holds (StoredCall::kMaxRank), through
// shard_map and the collectives that edit shapes; each result is checked
// against a sequential reference built from iota.

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"

namespace meshsim::high_rank_test {
namespace {

std::vector<int32_t> values(const Array& a) {
  const std::span<const int32_t> v = a.span<int32_t>();
  return {v.begin(), v.end()};
}

class HighRankTest : public ::testing::TestWithParam<int> {
 protected:
  // (2, 1, 1, ..., 1, 3): rank GetParam(), 6 elements.
  Shape global_shape() const {
    Shape shape(static_cast<size_t>(GetParam()), 1);
    shape.front() = 2;
    shape.back() = 3;
    return shape;
  }
};

TEST_P(HighRankTest, ShardMapPsumAndAllGatherKeepEveryDim) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  Runtime rt(2);
  const Array global = Array::iota(global_shape(), DType::kInt32);  // 0 .. 5
  std::vector<Shape> shard_shapes(2);
  const std::vector<Array> out = shard_map(
      rt, mesh,
      [&](DeviceContext& ctx, std::span<const Array> in) {
        const Array& shard = in[0];
        shard_shapes[ctx.position()] = shard.shape();
        AllGatherOptions stacked;
        stacked.axis = 1;  // a new dim at 1: rank + 1
        return std::vector<Array>{psum(ctx, shard, "x"), all_gather(ctx, shard, "x", stacked)};
      },
      {P{"x"}}, {P{}, P{}}, {global});
  Shape shard = global_shape();
  shard.front() = 1;
  for (const Shape& s : shard_shapes) EXPECT_EQ(s, shard);

  // psum of rows [0 1 2] and [3 4 5]: [3 5 7] in a shard's shape.
  ASSERT_EQ(out[0].shape(), shard);
  EXPECT_EQ(values(out[0]), (std::vector<int32_t>{3, 5, 7}));

  // Stacked at dim 1: shape (1, 2, 1, ..., 1, 3), both rows in rank order.
  Shape gathered = shard;
  gathered.insert(gathered.begin() + 1, 2);
  ASSERT_EQ(out[1].shape(), gathered);
  EXPECT_EQ(values(out[1]), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
}

TEST_P(HighRankTest, AllToAllMovesTheSplitDimIntoTheConcatDim) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  Runtime rt(2);
  std::vector<Array> results(2);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    // Device p holds iota + 10 p in shape (2, 1, ..., 1, 3).
    const Array x = Array::iota(global_shape(), DType::kInt32);
    Array mine = x.clone();
    for (int32_t& v : mine.mutable_span<int32_t>()) v += 10 * ctx.position();
    AllToAllOptions tiled;
    tiled.tiled = true;
    // Split dim 0 (2 rows, one per device), concatenate on the last dim.
    results[ctx.position()] = all_to_all(ctx, mine, "x", 0, GetParam() - 1, tiled);
  });
  Shape expected = global_shape();
  expected.front() = 1;
  expected.back() = 6;
  for (int p = 0; p < 2; ++p) {
    ASSERT_EQ(results[p].shape(), expected);
    // Row p of device 0, then row p of device 1.
    const int32_t base = 3 * p;
    EXPECT_EQ(values(results[p]),
              (std::vector<int32_t>{base, base + 1, base + 2, base + 10, base + 11, base + 12}));
  }
}

INSTANTIATE_TEST_SUITE_P(PastInlineAndPastStoredCalls, HighRankTest, ::testing::Values(7, 9),
                         [](const auto& info) { return "Rank" + std::to_string(info.param); });

}  // namespace
}  // namespace meshsim::high_rank_test
