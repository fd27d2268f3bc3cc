// pmap against an index-by-index reference written here: in_axes (mapped or
// broadcast), out_axes (negative included), several inputs and outputs,
// axis_index / axis_size inside the body, a chosen device list, and the errors.

#include "meshsim/runtime/drivers/pmap.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/runtime.h"
#include "support/expect_error.h"

namespace meshsim::pmap_test {
namespace {

// `shape` with `extent` inserted at dimension `axis` (0 <= axis <= rank).
Shape insert_dim(Shape shape, int axis, int64_t extent) {
  shape.insert(shape.begin() + axis, extent);
  return shape;
}

int64_t flat_of(const Shape& shape, const Shape& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// The body every mapped test runs: its slice, plus 100 * axis_index and
// 1000 * axis_size, so the result shows who computed each element.
constexpr auto mark_with_axis = [](DeviceContext& ctx, std::span<const Array> slices) {
  Array out = slices[0].clone();
  for (int32_t& v : out.mutable_span<int32_t>()) {
    v += 100 * ctx.axis_index("i") + 1000 * ctx.axis_size("i");
  }
  return std::vector<Array>{out};
};

class PmapAxesTest : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

// x has shape (2, 3) with n inserted at in_axis; device i sees x with index i
// along in_axis, and its (2, 3) result lands at index i along out_axis.
TEST_P(PmapAxesTest, SlicesAndStacksAlongTheGivenAxes) {
  const auto& [in_axis, out_axis, n] = GetParam();
  const Shape unmapped = {2, 3};
  const int in_dim = in_axis < 0 ? in_axis + 3 : in_axis;
  const int out_dim = out_axis < 0 ? out_axis + 3 : out_axis;
  const Array x = Array::iota(insert_dim(unmapped, in_dim, n), DType::kInt32);
  Runtime rt(n);
  const std::vector<Array> inputs = {x};
  const auto outs = pmap(rt, mark_with_axis, "i", inputs,
                         {.in_axes = {in_axis}, .out_axes = {out_axis}});
  ASSERT_EQ(outs.size(), 1u);

  const Shape out_shape = insert_dim(unmapped, out_dim, n);
  Array expected = Array::empty(out_shape, DType::kInt32);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t a = 0; a < unmapped[0]; ++a) {
      for (int64_t b = 0; b < unmapped[1]; ++b) {
        const int64_t from = flat_of(x.shape(), insert_dim({a, b}, in_dim, i));
        const int64_t to = flat_of(out_shape, insert_dim({a, b}, out_dim, i));
        expected.mutable_span<int32_t>()[to] =
            x.span<int32_t>()[from] + static_cast<int32_t>(100 * i + 1000 * n);
      }
    }
  }
  EXPECT_TRUE(array_equal(outs[0], expected)) << first_difference(outs[0], expected);
}

std::string axes_name(const ::testing::TestParamInfo<std::tuple<int, int, int>>& info) {
  const auto& [in_axis, out_axis, n] = info.param;
  auto name = [](int axis) { return axis < 0 ? "m" + std::to_string(-axis) : std::to_string(axis); };
  return "in" + name(in_axis) + "_out" + name(out_axis) + "_n" + std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(Axes, PmapAxesTest,
                         ::testing::Combine(::testing::Values(0, 1, 2, -1),
                                            ::testing::Values(0, 1, 2, -1),
                                            ::testing::Values(1, 3, 4)),
                         axes_name);

// x mapped over dim 0, w broadcast, z mapped over dim 1; two outputs stacked
// along dims 1 and 0.
TEST(PmapTest, BroadcastAndSeveralInputsAndOutputs) {
  Runtime rt(4);
  const std::vector<Array> inputs = {Array::iota({4, 2}, DType::kInt32),
                                     Array::from_values<int32_t>({2}, {10, 20}),
                                     Array::iota({3, 4}, DType::kInt32)};
  const auto outs = pmap(
      rt,
      [](DeviceContext& ctx, std::span<const Array> s) {
        // s[0]: row i of x (2); s[1]: all of w (2); s[2]: column i of z (3).
        Array sum = s[0].clone(), scaled = s[2].clone();
        for (int k = 0; k < 2; ++k) sum.mutable_span<int32_t>()[k] += s[1].span<int32_t>()[k];
        for (int32_t& v : scaled.mutable_span<int32_t>()) v *= ctx.axis_index("i");
        return std::vector<Array>{sum, scaled};
      },
      "i", inputs, {.in_axes = {0, std::nullopt, 1}, .out_axes = {1, 0}});
  ASSERT_EQ(outs.size(), 2u);
  // outs[0][k][i] = x[i][k] + w[k] = 2i + k + w[k].
  EXPECT_TRUE(array_equal(outs[0], Array::from_values<int32_t>(
                                       {2, 4}, {10, 12, 14, 16, 21, 23, 25, 27})))
      << outs[0];
  // outs[1][i][j] = z[j][i] * i = (4j + i) * i.
  EXPECT_TRUE(array_equal(outs[1], Array::from_values<int32_t>(
                                       {4, 3}, {0, 0, 0, 1, 5, 9, 4, 12, 20, 9, 21, 33})))
      << outs[1];
}

// Defaults: every input mapped over dim 0, every output stacked along dim 0.
TEST(PmapTest, DefaultsMapAndStackDimZero) {
  Runtime rt(3);
  const std::vector<Array> inputs = {Array::iota({3, 2}, DType::kInt32)};
  const auto outs = pmap(rt, mark_with_axis, "i", inputs);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_TRUE(array_equal(outs[0], Array::from_values<int32_t>(
                                       {3, 2}, {3000, 3001, 3102, 3103, 3204, 3205})))
      << outs[0];
}

// Index i runs on devices[i]; the others stay idle.
TEST(PmapTest, RunsOnTheGivenDevicesInOrder) {
  Runtime rt(6);
  const std::vector<Array> inputs = {Array::zeros({4}, DType::kInt32)};
  const auto outs = pmap(
      rt,
      [](DeviceContext& ctx, std::span<const Array>) {
        return std::vector<Array>{Array::scalar(int32_t{ctx.device_id()}),
                                  Array::scalar(int32_t{ctx.axis_index("i")})};
      },
      "i", inputs, {.devices = {5, 2, 4, 0}});
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(array_equal(outs[0], Array::from_values<int32_t>({4}, {5, 2, 4, 0}))) << outs[0];
  EXPECT_TRUE(array_equal(outs[1], Array::from_values<int32_t>({4}, {0, 1, 2, 3}))) << outs[1];
}

TEST(PmapErrorTest, MappedSizesMustAgree) {
  Runtime rt(4);
  const std::vector<Array> inputs = {Array::zeros({4, 2}, DType::kInt32),
                                     Array::zeros({2, 3}, DType::kInt32)};
  EXPECT_ERROR(pmap(rt, mark_with_axis, "i", inputs, {.in_axes = {0, 1}}), ShapeError,
               "pmap: mapped dimensions differ: 4 vs 3 for input 1 (in_axes[1])");
}

TEST(PmapErrorTest, InAxesOutOfRangeNamesTheEntry) {
  Runtime rt(4);
  const std::vector<Array> inputs = {Array::zeros({3}, DType::kInt32),
                                     Array::zeros({3, 2}, DType::kInt32)};
  EXPECT_ERROR(pmap(rt, mark_with_axis, "i", inputs, {.in_axes = {0, 2}}), ShapeError,
               "pmap: in_axes[1] = 2 is out of range for rank 2");
  EXPECT_ERROR(pmap(rt, mark_with_axis, "i", inputs, {.in_axes = {0, -3}}), ShapeError,
               "pmap: in_axes[1] = -3 is out of range for rank 2");
  EXPECT_ERROR(pmap(rt, mark_with_axis, "i", inputs, {.in_axes = {0}}), InvalidArgumentError,
               "pmap: in_axes has 1 entries for 2 inputs");
}

TEST(PmapErrorTest, OutAxesOutOfRangeNamesTheEntry) {
  Runtime rt(2);
  const std::vector<Array> inputs = {Array::zeros({2, 3}, DType::kInt32)};
  // The output (3) is stacked into rank 2: out_axes must be in [-2, 2).
  EXPECT_ERROR(pmap(rt, mark_with_axis, "i", inputs, {.out_axes = {2}}), ShapeError,
               "pmap: out_axes[0] = 2 is out of range for rank 2");
}

TEST(PmapErrorTest, DeviceCountMustMatchTheMappedSize) {
  Runtime rt(4);
  const std::vector<Array> inputs = {Array::zeros({4}, DType::kInt32)};
  EXPECT_ERROR(pmap(rt, mark_with_axis, "i", inputs, {.devices = {0, 1, 2}}),
               InvalidArgumentError, "pmap: mapped dimension has size 4 but 3 devices were given");
}

// Outputs that differ between devices name pmap and the shapes the bodies
// returned (not shard_map, nor the stacked shapes it would build).
TEST(PmapErrorTest, OutputsThatDifferNamePmapAndTheBodysShapes) {
  Runtime rt(2);
  const std::vector<Array> inputs = {Array::zeros({2, 3}, DType::kInt32)};
  const auto ragged = [](DeviceContext& ctx, std::span<const Array> slices) {
    return std::vector<Array>{Array::zeros({ctx.axis_index("i") + 1}, DType::kInt32)};
  };
  EXPECT_ERROR(pmap(rt, ragged, "i", inputs), ShapeError,
               "pmap output 0: device 0 returned int32(1) but device 1 returned int32(2)");
  const auto counts = [](DeviceContext& ctx, std::span<const Array> slices) {
    return std::vector<Array>(ctx.axis_index("i") + 1, slices[0]);
  };
  EXPECT_ERROR(pmap(rt, counts, "i", inputs), InvalidArgumentError,
               "pmap: device 1 returned 2 outputs but device 0 returned 1");
}

TEST(PmapErrorTest, SomeInputMustBeMapped) {
  Runtime rt(2);
  const std::vector<Array> inputs = {Array::zeros({2}, DType::kInt32)};
  EXPECT_ERROR(pmap(rt, mark_with_axis, "i", inputs, {.in_axes = {std::nullopt}}),
               InvalidArgumentError, "pmap needs at least one input mapped");
}

}  // namespace
}  // namespace meshsim::pmap_test
