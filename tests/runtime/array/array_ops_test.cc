// Elementwise arithmetic (runtime/array/array_ops.h) with known answers:
// numpy broadcasting, JAX type promotion, wrapping integers, bool rules, true
// division, half-precision rounding, and errors naming the shapes.

#include "meshsim/runtime/array/array_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "meshsim/mesh/error.h"
#include "meshsim/testing/array_matchers.h"
#include "support/expect_error.h"

namespace meshsim::array_ops_test {
namespace {

TEST(ArrayOpsTest, SameShapeArithmetic) {
  const Array a = Array::from_values<float>({2, 2}, {1, 2, 3, 4});
  const Array b = Array::from_values<float>({2, 2}, {0.5f, -2, 10, 8});
  EXPECT_THAT(a + b, ArrayEq(Array::from_values<float>({2, 2}, {1.5f, 0, 13, 12})));
  EXPECT_THAT(a - b, ArrayEq(Array::from_values<float>({2, 2}, {0.5f, 4, -7, -4})));
  EXPECT_THAT(a * b, ArrayEq(Array::from_values<float>({2, 2}, {0.5f, -4, 30, 32})));
  EXPECT_THAT(a / b, ArrayEq(Array::from_values<float>({2, 2}, {2, -1, 0.3f, 0.5f})));
}

// numpy's broadcasting examples: a row against a matrix, a column against a
// row, and a rank-0 scalar.
TEST(ArrayOpsTest, BroadcastsLikeNumpy) {
  const Array matrix = Array::from_values<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Array row = Array::from_values<int32_t>({3}, {10, 20, 30});
  EXPECT_THAT(matrix + row, ArrayEq(Array::from_values<int32_t>({2, 3}, {11, 22, 33, 14, 25, 36})));
  EXPECT_THAT(row + matrix, ArrayEq(Array::from_values<int32_t>({2, 3}, {11, 22, 33, 14, 25, 36})));
  const Array column = Array::from_values<int32_t>({3, 1}, {0, 1, 2});
  const Array wide = Array::from_values<int32_t>({4}, {0, 10, 20, 30});
  EXPECT_THAT(column + wide, ArrayEq(Array::from_values<int32_t>(
                                 {3, 4}, {0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32})));
  EXPECT_THAT(Array::iota({4}, DType::kFloat32) * Array::scalar(2.0f),
              ArrayEq(Array::from_values<float>({4}, {0, 2, 4, 6})));
  EXPECT_THAT(Array::scalar(1.0) - Array::scalar(3.0), ArrayEq(Array::scalar(-2.0)));
  EXPECT_EQ(broadcast_shapes({8, 1, 6, 1}, {7, 1, 5}), (Shape{8, 7, 6, 5}));
  EXPECT_EQ(broadcast_shapes({5, 4}, {1}), (Shape{5, 4}));
  EXPECT_EQ(broadcast_shapes({0, 3}, {1, 3}), (Shape{0, 3}));
}

TEST(ArrayOpsTest, ShapesThatDoNotBroadcastNameBoth) {
  const Array a = Array::zeros({2, 3}, DType::kFloat32);
  EXPECT_ERROR(a + Array::zeros({2}, DType::kFloat32), ShapeError,
               "add: shapes (2, 3) and (2) do not broadcast");
  EXPECT_ERROR(a / Array::zeros({4, 3}, DType::kFloat32), ShapeError,
               "divide: shapes (2, 3) and (4, 3) do not broadcast");
}

TEST(ArrayOpsTest, IntegersWrap) {
  EXPECT_THAT(Array::scalar(int8_t{127}) + Array::scalar(int8_t{1}),
              ArrayEq(Array::scalar(int8_t{-128})));
  EXPECT_THAT(Array::scalar(std::numeric_limits<int32_t>::max()) * Array::scalar(int32_t{2}),
              ArrayEq(Array::scalar(int32_t{-2})));
  EXPECT_THAT(Array::scalar(std::numeric_limits<int64_t>::min()) - Array::scalar(int64_t{1}),
              ArrayEq(Array::scalar(std::numeric_limits<int64_t>::max())));
  EXPECT_THAT(Array::scalar(uint8_t{0}) - Array::scalar(uint8_t{1}),
              ArrayEq(Array::scalar(uint8_t{255})));
  EXPECT_THAT(Array::scalar(uint8_t{16}) * Array::scalar(uint8_t{17}),
              ArrayEq(Array::scalar(uint8_t{16})));  // 272 mod 256
  EXPECT_THAT(Array::scalar(uint32_t{0}) - Array::scalar(uint32_t{1}),
              ArrayEq(Array::scalar(uint32_t{4294967295u})));
}

TEST(ArrayOpsTest, PromotesLikeJax) {
  // int8 + uint8: JAX says int16, which meshsim lacks: int32.
  const Array sum = Array::scalar(int8_t{-1}) + Array::scalar(uint8_t{255});
  EXPECT_THAT(sum, ArrayEq(Array::scalar(int32_t{254})));
  EXPECT_THAT(Array::scalar(uint32_t{4294967295u}) + Array::scalar(int32_t{1}),
              ArrayEq(Array::scalar(int64_t{4294967296})));
  EXPECT_THAT(Array::scalar(int32_t{3}) * Array::scalar(Eigen::half(0.5f)),
              ArrayEq(Array::scalar(Eigen::half(1.5f))));
  EXPECT_THAT(Array::scalar(Eigen::half(1)) + Array::scalar(Eigen::bfloat16(2)),
              ArrayEq(Array::scalar(3.0f)));
  EXPECT_THAT(Array::scalar(true) + Array::scalar(int8_t{4}), ArrayEq(Array::scalar(int8_t{5})));
  EXPECT_THAT(Array::scalar(1.5f) + Array::scalar(1.0), ArrayEq(Array::scalar(2.5)));
}

TEST(ArrayOpsTest, BoolAddIsOrMultiplyIsAndSubtractIsAnError) {
  const Array a = Array::from_values<bool>({4}, {true, false, true, false});
  const Array b = Array::from_values<bool>({4}, {true, true, false, false});
  EXPECT_THAT(a + b, ArrayEq(Array::from_values<bool>({4}, {true, true, true, false})));
  EXPECT_THAT(a * b, ArrayEq(Array::from_values<bool>({4}, {true, false, false, false})));
  EXPECT_ERROR(a - b, DTypeError, "subtract of two bool arrays (shapes (4) and (4))");
}

TEST(ArrayOpsTest, TrueDivisionOfIntegersIsFloat64) {
  const Array a = Array::from_values<int32_t>({4}, {1, -7, 1, 0});
  const Array b = Array::from_values<int32_t>({4}, {2, 2, 0, 0});
  const Array q = a / b;
  EXPECT_EQ(q.dtype(), DType::kFloat64);
  EXPECT_EQ(q.at<double>({0}), 0.5);
  EXPECT_EQ(q.at<double>({1}), -3.5);
  EXPECT_EQ(q.at<double>({2}), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(q.at<double>({3})));
  EXPECT_THAT(Array::scalar(true) / Array::scalar(true), ArrayEq(Array::scalar(1.0)));
  EXPECT_THAT(Array::scalar(uint8_t{3}) / Array::scalar(uint8_t{4}),
              ArrayEq(Array::scalar(0.75)));
  // Floats keep their dtype.
  EXPECT_EQ((Array::scalar(1.0f) / Array::scalar(3.0f)).dtype(), DType::kFloat32);
}

TEST(ArrayOpsTest, HalfPrecisionRoundsEachResult) {
  // 2048 + 1 is halfway between the float16 neighbours 2048 and 2050: ties to even.
  EXPECT_THAT(Array::scalar(Eigen::half(2048)) + Array::scalar(Eigen::half(1)),
              ArrayEq(Array::scalar(Eigen::half(2048))));
  // bfloat16 has 8 significant bits: 256 + 1 rounds to 256.
  EXPECT_THAT(Array::scalar(Eigen::bfloat16(256)) + Array::scalar(Eigen::bfloat16(1)),
              ArrayEq(Array::scalar(Eigen::bfloat16(256))));
}

TEST(ArrayOpsTest, ZeroSizeOperands) {
  const Array empty = Array::zeros({0, 3}, DType::kInt32);
  EXPECT_THAT(empty + Array::iota({1, 3}, DType::kInt32), ArrayEq(empty));
  EXPECT_THAT(empty * Array::scalar(int32_t{2}), ArrayEq(empty));
  EXPECT_THAT(empty / empty, ArrayEq(Array::zeros({0, 3}, DType::kFloat64)));
  EXPECT_THAT(Array::zeros({0}, DType::kBool) + Array::zeros({0}, DType::kBool),
              ArrayEq(Array::zeros({0}, DType::kBool)));
}

TEST(ArrayOpsTest, InputsAreUnchanged) {
  const Array a = Array::iota({3}, DType::kFloat32);
  const Array copy = a;
  const Array sum = a + a;
  EXPECT_FALSE(sum.shares_storage_with(a));
  EXPECT_THAT(a, ArrayEq(Array::iota({3}, DType::kFloat32)));
  EXPECT_TRUE(copy.shares_storage_with(a));
}

}  // namespace
}  // namespace meshsim::array_ops_test
