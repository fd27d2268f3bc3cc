// Shape operations (runtime/array/array_shape_ops.h) with known answers, most
// from the jax.lax / jax.numpy documentation examples.

#include "meshsim/runtime/array/array_shape_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/testing/array_matchers.h"
#include "support/expect_error.h"

namespace meshsim::array_shape_ops_test {
namespace {

Array ints(Shape shape, std::initializer_list<int32_t> values) {
  return Array::from_values<int32_t>(std::move(shape), values);
}

// jnp.arange(12).reshape(3, 4) as int32.
Array arange_3x4() { return Array::iota({3, 4}, DType::kInt32); }

TEST(BroadcastToTest, RepeatsAlongNewAndUnitDims) {
  EXPECT_THAT(broadcast_to(ints({3}, {1, 2, 3}), {2, 3}),
              ArrayEq(ints({2, 3}, {1, 2, 3, 1, 2, 3})));
  EXPECT_THAT(broadcast_to(ints({2, 1}, {1, 2}), {2, 3}),
              ArrayEq(ints({2, 3}, {1, 1, 1, 2, 2, 2})));
  EXPECT_THAT(broadcast_to(Array::scalar(int32_t{7}), {2}), ArrayEq(ints({2}, {7, 7})));
  EXPECT_THAT(broadcast_to(ints({1}, {5}), {0}), ArrayEq(Array::zeros({0}, DType::kInt32)));
  const Array a = arange_3x4();
  EXPECT_TRUE(broadcast_to(a, {3, 4}).shares_storage_with(a));
  EXPECT_ERROR(broadcast_to(a, {4, 4}), ShapeError, "cannot broadcast shape (3, 4) to (4, 4)");
  EXPECT_ERROR(broadcast_to(a, {4}), ShapeError, "cannot broadcast shape (3, 4) to (4)");
}

TEST(SliceTest, StartLimitStride) {
  // lax.slice(jnp.arange(10), (2,), (8,), (3,)) == [2, 5].
  EXPECT_THAT(slice(Array::iota({10}, DType::kInt32), {2}, {8}, {3}), ArrayEq(ints({2}, {2, 5})));
  EXPECT_THAT(slice(arange_3x4(), {1, 1}, {3, 3}), ArrayEq(ints({2, 2}, {5, 6, 9, 10})));
  EXPECT_THAT(slice(arange_3x4(), {0, 1}, {3, 4}, {2, 2}), ArrayEq(ints({2, 2}, {1, 3, 9, 11})));
  EXPECT_THAT(slice(arange_3x4(), {1, 2}, {1, 4}), ArrayEq(Array::zeros({0, 2}, DType::kInt32)));
  EXPECT_THAT(slice(Array::scalar(1.5), {}, {}), ArrayEq(Array::scalar(1.5)));
}

// A stride past the slice's length takes its first element, whatever its
// size: ceil(n / stride) must not overflow on the way (n + stride - 1).
TEST(SliceTest, AHugeStrideTakesTheFirstElement) {
  const Array a = Array::iota({4}, DType::kInt32);
  for (const int64_t stride : {int64_t{5}, int64_t{1} << 62, INT64_MAX - 2, INT64_MAX}) {
    EXPECT_THAT(slice(a, {1}, {4}, {stride}), ArrayEq(ints({1}, {1}))) << stride;
    EXPECT_THAT(slice(a, {2}, {2}, {stride}), ArrayEq(Array::zeros({0}, DType::kInt32)))
        << stride;
  }
  EXPECT_THAT(slice(arange_3x4(), {0, 1}, {3, 4}, {INT64_MAX, 2}), ArrayEq(ints({1, 2}, {1, 3})));
}

TEST(SliceTest, ErrorsNameShapeAndBounds) {
  const Array a = arange_3x4();
  EXPECT_ERROR(slice(a, {0, 0}, {3, 5}), ShapeError,
               "slice of shape (3, 4) from (0, 0) to (3, 5): dim 1 needs 0 <= start <= limit <= 4");
  EXPECT_ERROR(slice(a, {2, 0}, {1, 4}), ShapeError, "dim 0 needs 0 <= start <= limit <= 3");
  EXPECT_ERROR(slice(a, {-1, 0}, {1, 4}), ShapeError, "dim 0 needs");
  EXPECT_ERROR(slice(a, {0}, {1}), ShapeError,
               "slice of shape (3, 4) from (0) to (1): start has 1 entries for an array of rank 2");
  EXPECT_ERROR(slice(a, {0, 0}, {1, 1}, {1, 0}), InvalidArgumentError,
               "slice of shape (3, 4) from (0, 0) to (1, 1) by (1, 0): strides must be at least 1");
}

TEST(DynamicSliceTest, ClampsStartsLikeJax) {
  // The jax.lax.dynamic_slice documentation examples.
  EXPECT_THAT(dynamic_slice(arange_3x4(), {1, 1}, {2, 3}),
              ArrayEq(ints({2, 3}, {5, 6, 7, 9, 10, 11})));
  EXPECT_THAT(dynamic_slice(arange_3x4(), {1, 3}, {2, 2}), ArrayEq(ints({2, 2}, {6, 7, 10, 11})));
  // Negative: the dim is added once (-1 -> 2, clamped to 1), then clamped.
  EXPECT_THAT(dynamic_slice(arange_3x4(), {-1, 0}, {2, 2}), ArrayEq(ints({2, 2}, {4, 5, 8, 9})));
  EXPECT_THAT(dynamic_slice(arange_3x4(), {-10, -1}, {2, 2}),
              ArrayEq(ints({2, 2}, {2, 3, 6, 7})));
  EXPECT_THAT(dynamic_slice(arange_3x4(), {100, 100}, {3, 4}), ArrayEq(arange_3x4()));
  EXPECT_THAT(dynamic_slice(arange_3x4(), {5, 0}, {0, 4}),
              ArrayEq(Array::zeros({0, 4}, DType::kInt32)));
}

TEST(DynamicSliceTest, SizesOutOfRangeAreShapeErrors) {
  EXPECT_ERROR(dynamic_slice(arange_3x4(), {0, 0}, {4, 1}), ShapeError,
               "dynamic_slice of shape (3, 4) at (0, 0) of sizes (4, 1): size 4 of dim 0 is not "
               "in [0, 3]");
  EXPECT_ERROR(dynamic_slice(arange_3x4(), {0}, {1, 1}), ShapeError,
               "start has 1 entries for an array of rank 2");
}

TEST(DynamicUpdateSliceTest, ClampsStartsLikeJax) {
  // jax.lax.dynamic_update_slice documentation: zeros(6) updated with ones(3).
  const Array x = Array::zeros({6}, DType::kFloat32);
  const Array y = Array::full({3}, DType::kFloat32, 1);
  EXPECT_THAT(dynamic_update_slice(x, y, {2}),
              ArrayEq(Array::from_values<float>({6}, {0, 0, 1, 1, 1, 0})));
  EXPECT_THAT(dynamic_update_slice(x, y, {4}),
              ArrayEq(Array::from_values<float>({6}, {0, 0, 0, 1, 1, 1})));
  EXPECT_THAT(dynamic_update_slice(x, y, {-1}),
              ArrayEq(Array::from_values<float>({6}, {0, 0, 0, 1, 1, 1})));
  EXPECT_THAT(dynamic_update_slice(arange_3x4(), ints({1, 2}, {-1, -2}), {2, 1}),
              ArrayEq(ints({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -2, 11})));
  EXPECT_THAT(x, ArrayEq(Array::zeros({6}, DType::kFloat32)));  // input unchanged
  EXPECT_THAT(dynamic_update_slice(x, Array::zeros({0}, DType::kFloat32), {3}), ArrayEq(x));
  EXPECT_THAT(dynamic_update_slice(Array::scalar(1), Array::scalar(2), {}),
              ArrayEq(Array::scalar(2)));
}

TEST(DynamicUpdateSliceTest, Errors) {
  const Array x = Array::zeros({6}, DType::kFloat32);
  EXPECT_ERROR(dynamic_update_slice(x, Array::zeros({2}, DType::kFloat64), {0}), DTypeError,
               "dynamic_update_slice of shape (6) with an update of shape (2) at (0): the update "
               "is float64, the array float32");
  EXPECT_ERROR(dynamic_update_slice(x, Array::zeros({7}, DType::kFloat32), {0}), ShapeError,
               "the update is larger in dim 0");
  EXPECT_ERROR(dynamic_update_slice(x, Array::zeros({1, 1}, DType::kFloat32), {0}), ShapeError,
               "ranks differ");
}

TEST(ConcatenateTest, JoinsAlongAnAxis) {
  const Array a = ints({2, 2}, {0, 1, 2, 3});
  EXPECT_THAT(concatenate({a, ints({1, 2}, {4, 5})}), ArrayEq(ints({3, 2}, {0, 1, 2, 3, 4, 5})));
  EXPECT_THAT(concatenate({a, ints({2, 1}, {9, 9})}, -1),
              ArrayEq(ints({2, 3}, {0, 1, 9, 2, 3, 9})));
  EXPECT_THAT(concatenate({a}), ArrayEq(a));
  EXPECT_THAT(concatenate({Array::zeros({0, 2}, DType::kInt32), a, Array::zeros({0, 2},
                                                                             DType::kInt32)}),
              ArrayEq(a));
  // jnp.concatenate promotes: int32 with float32 is float32.
  EXPECT_THAT(concatenate({ints({1}, {1}), Array::from_values<float>({1}, {0.5f})}),
              ArrayEq(Array::from_values<float>({2}, {1, 0.5f})));
}

TEST(ConcatenateTest, ErrorsNameTheShapes) {
  const Array a = ints({2, 2}, {0, 1, 2, 3});
  EXPECT_ERROR(concatenate({a, ints({1, 3}, {0, 0, 0})}), ShapeError,
               "concatenate along axis 0 of shapes (2, 2), (1, 3): all dims but the axis must "
               "agree");
  EXPECT_ERROR(concatenate({a, ints({4}, {0, 0, 0, 0})}), ShapeError, "all dims but the axis");
  EXPECT_ERROR(concatenate({a, a}, 2), ShapeError, "axis 2 is out of range for rank 2");
  EXPECT_ERROR(concatenate({Array::scalar(1), Array::scalar(2)}), ShapeError,
               "scalars cannot be concatenated");
  EXPECT_ERROR(concatenate(std::vector<Array>{}), InvalidArgumentError,
               "concatenate of no arrays");
}

TEST(StackTest, JoinsAlongANewAxis) {
  const Array a = ints({2}, {1, 2}), b = ints({2}, {3, 4});
  EXPECT_THAT(stack({a, b}), ArrayEq(ints({2, 2}, {1, 2, 3, 4})));
  EXPECT_THAT(stack({a, b}, 1), ArrayEq(ints({2, 2}, {1, 3, 2, 4})));
  EXPECT_THAT(stack({a, b}, -1), ArrayEq(ints({2, 2}, {1, 3, 2, 4})));
  EXPECT_THAT(stack({Array::scalar(1), Array::scalar(2)}), ArrayEq(ints({2}, {1, 2})));
  EXPECT_ERROR(stack({a, ints({3}, {0, 0, 0})}), ShapeError,
               "stack along axis 0 of shapes (2), (3): shapes differ");
  EXPECT_ERROR(stack({a, b}, 2), ShapeError, "axis 2 is out of range for rank 2");
  EXPECT_ERROR(stack(std::vector<Array>{}), InvalidArgumentError, "stack of no arrays");
}

TEST(ExpandDimsSqueezeTest, InsertAndRemoveUnitDims) {
  const Array a = arange_3x4();
  EXPECT_EQ(expand_dims(a, {0}).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(expand_dims(a, {-1}).shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(expand_dims(a, {0, 2}).shape(), (Shape{1, 3, 1, 4}));
  EXPECT_EQ(expand_dims(Array::scalar(1), {0}).shape(), Shape{1});
  EXPECT_TRUE(expand_dims(a, {1}).shares_storage_with(a));
  EXPECT_ERROR(expand_dims(a, {0, 0}), ShapeError,
               "expand_dims of shape (3, 4) at (0, 0): axis 0 is repeated");
  EXPECT_ERROR(expand_dims(a, {3}), ShapeError, "axis 3 is out of range for rank 3");

  const Array b = Array::iota({1, 3, 1, 4}, DType::kInt32);
  EXPECT_THAT(squeeze(b), ArrayEq(a));
  EXPECT_EQ(squeeze(b, {2}).shape(), (Shape{1, 3, 4}));
  EXPECT_EQ(squeeze(b, {0, -2}).shape(), (Shape{3, 4}));
  EXPECT_EQ(squeeze(Array::zeros({1, 1}, DType::kBool)).shape(), Shape{});
  EXPECT_TRUE(squeeze(b).shares_storage_with(b));
  EXPECT_ERROR(squeeze(b, {1}), ShapeError,
               "squeeze of shape (1, 3, 1, 4) at (1): dim 1 is 3, not 1");
  EXPECT_ERROR(squeeze(b, {4}), ShapeError, "axis 4 is out of range for rank 4");
}

TEST(TransposeTest, PermutesDims) {
  EXPECT_THAT(transpose(Array::iota({2, 3}, DType::kInt32)),
              ArrayEq(ints({3, 2}, {0, 3, 1, 4, 2, 5})));
  // out[i, j, k] = a[k, i, j] = 12k + 4i + j.
  const Array t = transpose(Array::iota({2, 3, 4}, DType::kInt64), {1, 2, 0});
  ASSERT_EQ(t.shape(), (Shape{3, 4, 2}));
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t k = 0; k < 2; ++k) EXPECT_EQ(t.at<int64_t>({i, j, k}), 12 * k + 4 * i + j);
    }
  }
  EXPECT_THAT(transpose(arange_3x4(), {-1, 0}), ArrayEq(transpose(arange_3x4())));
  EXPECT_THAT(transpose(Array::scalar(2.5f)), ArrayEq(Array::scalar(2.5f)));
  EXPECT_EQ(transpose(Array::zeros({0, 5}, DType::kFloat16)).shape(), (Shape{5, 0}));
  EXPECT_ERROR(transpose(arange_3x4(), {0, 0}), ShapeError,
               "transpose of shape (3, 4) by (0, 0): axis 0 is repeated");
  EXPECT_ERROR(transpose(arange_3x4(), {0}), ShapeError,
               "transpose of shape (3, 4) by (0): the permutation has 1 axes for rank 2");
}

// Every shape op on arrays with a zero dim, for a dtype of each size.
TEST(ShapeOpsZeroSizeTest, EveryOpWorks) {
  for (DType dtype : kAllDTypes) {
    SCOPED_TRACE(dtype_name(dtype));
    const Array a = Array::zeros({2, 0, 3}, dtype);
    EXPECT_EQ(broadcast_to(a, {4, 2, 0, 3}).shape(), (Shape{4, 2, 0, 3}));
    EXPECT_EQ(slice(a, {0, 0, 1}, {2, 0, 3}).shape(), (Shape{2, 0, 2}));
    EXPECT_EQ(dynamic_slice(a, {1, 0, 1}, {1, 0, 2}).shape(), (Shape{1, 0, 2}));
    EXPECT_THAT(dynamic_update_slice(a, Array::zeros({1, 0, 1}, dtype), {0, 0, 0}), ArrayEq(a));
    EXPECT_EQ(concatenate({a, a}, 1).shape(), (Shape{2, 0, 3}));
    EXPECT_EQ(concatenate({a, a}, 0).shape(), (Shape{4, 0, 3}));
    EXPECT_EQ(stack({a, a}, 3).shape(), (Shape{2, 0, 3, 2}));
    EXPECT_EQ(expand_dims(a, {0}).shape(), (Shape{1, 2, 0, 3}));
    EXPECT_EQ(squeeze(expand_dims(a, {0})).shape(), a.shape());
    EXPECT_EQ(transpose(a).shape(), (Shape{3, 0, 2}));
  }
}

}  // namespace
}  // namespace meshsim::array_shape_ops_test
