// The bidirectional all-gather collective matmul (collective_matmul.h)
// against a sequential reference (gather each ring's lhs shards, multiply)
// and against meshsim's all_gather followed by a local matmul, over ring
// layouts and buffering depths; then each argument error it raises.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cstdint>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <meshsim/meshsim.h>

#include "collective_matmul.h"

namespace meshsim::collective_matmul_test {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using Rings = std::vector<std::vector<int>>;

constexpr int64_t kRows = 3, kShardCols = 2, kOutCols = 5;  // n, k_shard, m

struct RingCase {
  std::string name;
  int devices;
  Rings rings;
  int buffering;
};
std::ostream& operator<<(std::ostream& os, const RingCase& c) { return os << c.name; }

// Integers in [-4, 4] are exact in bfloat16, and so is every float32 sum of
// their products here, whatever the order: results must match bit for bit.
Array small_integers(int64_t rows, int64_t cols, std::mt19937& rng) {
  Array a = Array::empty({rows, cols}, DType::kBFloat16);
  for (auto& v : a.mutable_span<Eigen::bfloat16>()) v = Eigen::bfloat16(static_cast<int>(rng() % 9) - 4);
  return a;
}

// Device d's lhs shard is column block d of `lhs`; its output is row block d
// of the result.
Array kernel_result(Runtime& rt, const RingCase& c, const Array& lhs, const Array& rhs) {
  auto body = [&](DeviceContext& ctx, std::span<const Array> x) {
    return examples::bidirectional_allgather_matmul(ctx, x[0], x[1], c.rings, /*collective_id=*/0,
                                                    c.buffering);
  };
  return shard_map(rt, Mesh::make({{"d", c.devices}}), body, {P{nullptr, "d"}, P{}}, {P{"d"}},
                   {lhs, rhs})[0];
}

// The same with meshsim's all_gather: axis_index_groups gather in ring order.
Array all_gather_result(Runtime& rt, const RingCase& c, const Array& lhs, const Array& rhs) {
  auto body = [&](DeviceContext& ctx, std::span<const Array> x) {
    const Array gathered =
        all_gather(ctx, x[0], "d", {.axis = 1, .tiled = true, .axis_index_groups = c.rings});
    return from_eigen(matrix_view<Eigen::bfloat16>(gathered).cast<float>() *
                      matrix_view<Eigen::bfloat16>(x[1]).cast<float>());
  };
  return shard_map(rt, Mesh::make({{"d", c.devices}}), body, {P{nullptr, "d"}, P{}}, {P{"d"}},
                   {lhs, rhs})[0];
}

// Sequentially: for each ring, each member's output is its ring's lhs shards,
// side by side in ring order, times rhs.
Array reference(const RingCase& c, const Array& lhs, const Array& rhs) {
  const auto lhs_f = matrix_view<Eigen::bfloat16>(lhs).cast<float>().eval();
  const auto rhs_f = matrix_view<Eigen::bfloat16>(rhs).cast<float>().eval();
  RowMatrix<float> out(c.devices * kRows, kOutCols);
  for (const auto& ring : c.rings) {
    RowMatrix<float> gathered(kRows, kShardCols * ring.size());
    for (size_t i = 0; i < ring.size(); ++i) {
      gathered.middleCols(i * kShardCols, kShardCols) = lhs_f.middleCols(ring[i] * kShardCols, kShardCols);
    }
    for (int d : ring) out.middleRows(d * kRows, kRows) = gathered * rhs_f;
  }
  return from_eigen(out);
}

class CollectiveMatmulTest : public ::testing::TestWithParam<RingCase> {};

TEST_P(CollectiveMatmulTest, EqualsGatheredProductAndAllGatherMatmul) {
  const RingCase& c = GetParam();
  const int64_t ring_len = c.rings[0].size();
  std::mt19937 rng(c.devices * 10 + c.buffering);
  const Array lhs = small_integers(kRows, c.devices * kShardCols, rng);
  const Array rhs = small_integers(ring_len * kShardCols, kOutCols, rng);
  Runtime rt(c.devices);

  const Array got = kernel_result(rt, c, lhs, rhs);

  const Array expected = reference(c, lhs, rhs);
  EXPECT_TRUE(array_equal(got, expected)) << first_difference(got, expected);
  const Array gathered = all_gather_result(rt, c, lhs, rhs);
  EXPECT_TRUE(array_equal(got, gathered)) << first_difference(got, gathered);
}

// `count` rings of `len` ids: consecutive ({0, 1, 2, 3}, {4, 5, 6, 7}) or,
// strided, every count-th id ({0, 2, 4, 6}, {1, 3, 5, 7}).
Rings make_rings(int count, int len, bool strided) {
  Rings out(count);
  for (int r = 0; r < count; ++r) {
    for (int i = 0; i < len; ++i) out[r].push_back(strided ? r + i * count : r * len + i);
  }
  return out;
}

std::vector<RingCase> ring_cases() {
  std::vector<RingCase> cases;
  for (int buffering : {2, 4}) {
    const std::string b = "_buffering" + std::to_string(buffering);
    cases.push_back({"2devices" + b, 2, {{0, 1}}, buffering});
    cases.push_back({"4devices" + b, 4, make_rings(1, 4, false), buffering});
    cases.push_back({"4devices_ring2031" + b, 4, {{2, 0, 3, 1}}, buffering});
    cases.push_back({"8devices" + b, 8, make_rings(1, 8, false), buffering});
    cases.push_back({"8devices_2rings" + b, 8, make_rings(2, 4, false), buffering});
    cases.push_back({"8devices_2strided_rings" + b, 8, make_rings(2, 4, true), buffering});
  }
  cases.push_back({"64devices_buffering4", 64, make_rings(1, 64, false), 4});
  cases.push_back({"64devices_8strided_rings_buffering2", 64, make_rings(8, 8, true), 2});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Rings, CollectiveMatmulTest, ::testing::ValuesIn(ring_cases()),
                         [](const auto& info) { return info.param.name; });

// Back to back with one collective id: each kernel leaves the shared barrier
// semaphore at 0, so the next one starts clean.
TEST(CollectiveMatmulTest, RunsBackToBackWithOneCollectiveId) {
  const RingCase c{"4devices", 4, {{0, 1, 2, 3}}, 2};
  std::mt19937 rng(7);
  const Array lhs = small_integers(kRows, 4 * kShardCols, rng);
  const Array rhs = small_integers(4 * kShardCols, kOutCols, rng);
  Runtime rt(4);
  auto body = [&](DeviceContext& ctx, std::span<const Array> x) {
    Array sum = examples::bidirectional_allgather_matmul(ctx, x[0], x[1], c.rings, 3);
    for (int round = 0; round < 20; ++round) {
      const Array again = examples::bidirectional_allgather_matmul(ctx, x[0], x[1], c.rings, 3);
      EXPECT_TRUE(array_equal(again, sum)) << "round " << round;
    }
    return sum;
  };
  const Array got = shard_map(rt, Mesh::make({{"d", 4}}), body, {P{nullptr, "d"}, P{}}, {P{"d"}},
                              {lhs, rhs})[0];
  EXPECT_TRUE(array_equal(got, reference(c, lhs, rhs)));
}

// --- argument errors: every device raises them before the kernel starts ---

// Runs the matmul on `devices` devices, each with the same lhs_local.
void run(int devices, const Array& lhs_local, const Array& rhs, const Rings& rings,
         int buffering = 2) {
  Runtime rt(devices);
  rt.launch(Mesh::make({{"d", devices}}), [&](DeviceContext& ctx) {
    examples::bidirectional_allgather_matmul(ctx, lhs_local, rhs, rings, 0, buffering);
  });
}

TEST(CollectiveMatmulErrorTest, EachArgumentErrorNamesItsValues) {
  const Array lhs = Array::zeros({kRows, kShardCols}, DType::kBFloat16);
  const Array rhs = Array::zeros({4 * kShardCols, kOutCols}, DType::kBFloat16);
  const Rings ring4 = {{0, 1, 2, 3}};
  EXPECT_THAT([&] { run(4, lhs.reshape({-1}), rhs, ring4); },
              ThrowsMessage<ShapeError>(HasSubstr("lhs_local must be 2-D, got shape (6)")));
  EXPECT_THAT([&] { run(4, lhs, rhs, {}); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("got no rows")));
  EXPECT_THAT([&] { run(4, lhs, rhs, {{0, 1}, {2, 3, 4}}); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("row 1 has 3 ids and row 0 has 2")));
  EXPECT_THAT(
      [&] { run(4, lhs, Array::zeros({7, kOutCols}, DType::kBFloat16), ring4); },
      ThrowsMessage<ShapeError>(HasSubstr(
          "lhs_local has k_shard = 2 columns and rings have length 4, so rhs needs 8 rows, but has 7")));
  EXPECT_THAT([&] { run(4, lhs.astype(DType::kFloat32), rhs, ring4); },
              ThrowsMessage<DTypeError>(HasSubstr("got float32 lhs_local and bfloat16 rhs")));
  EXPECT_THAT([&] { run(4, lhs, rhs.astype(DType::kFloat16), ring4); },
              ThrowsMessage<DTypeError>(HasSubstr("got bfloat16 lhs_local and float16 rhs")));
  const Array rhs3 = Array::zeros({3 * kShardCols, kOutCols}, DType::kBFloat16);
  EXPECT_THAT([&] { run(3, lhs, rhs3, {{0, 1, 2}}); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("rings of even length, got 3")));
  for (int buffering : {0, 1, 3, 6}) {
    EXPECT_THAT([&] { run(4, lhs, rhs, ring4, buffering); },
                ThrowsMessage<InvalidArgumentError>(HasSubstr(
                    "buffering must be a power of two, at least 2, got " + std::to_string(buffering))));
  }
  EXPECT_THAT([&] { run(8, lhs, rhs, ring4); },
              ThrowsMessage<InvalidArgumentError>(
                  HasSubstr("rings hold 4 ids but the kernel runs on 8 devices")));
  EXPECT_THAT([&] { run(4, lhs, rhs, {{0, 1, 4, 3}}); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("ring id 4 is outside [0, 4)")));
  EXPECT_THAT([&] { run(4, lhs, rhs, {{0, 1, 1, 3}}); },
              ThrowsMessage<InvalidArgumentError>(HasSubstr("ring id 1 appears twice")));
}

}  // namespace
}  // namespace meshsim::collective_matmul_test
