// Eigen views of an Array (runtime/array_views.h): row-major indexing, matmuls
// through views, copy-on-write through mutable views, rank and dtype checks.

#include "meshsim/runtime/array/array_views.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/array/tensor_views.h"
#include "support/expect_error.h"

namespace meshsim::array_views_test {
namespace {

TEST(ArrayViewTest, MatrixViewOfIota) {
  const Array a = Array::iota({2, 3}, DType::kFloat32);
  RowMatrix<float> expected(2, 3);
  expected << 0, 1, 2, 3, 4, 5;
  EXPECT_EQ(matrix_view<float>(a), expected);
}

template <class T>
class ArrayViewMatmulTest : public ::testing::Test {};
using MatmulTypes = ::testing::Types<float, double, int32_t, int64_t>;
TYPED_TEST_SUITE(ArrayViewMatmulTest, MatmulTypes);

// [[0 1 2] [3 4 5]] x [[0 1] [2 3] [4 5]] = [[10 13] [28 40]], with the dtype
// of the views.
TYPED_TEST(ArrayViewMatmulTest, MatmulThroughViews) {
  constexpr DType kDType = dtype_of<TypeParam>();
  const Array a = Array::iota({2, 3}, kDType);
  const Array b = Array::iota({3, 2}, kDType);
  const Array c = from_eigen(matrix_view<TypeParam>(a) * matrix_view<TypeParam>(b));
  const Array expected = Array::from_values<TypeParam>({2, 2}, {10, 13, 28, 40});
  EXPECT_TRUE(array_equal(c, expected)) << first_difference(c, expected);
}

TEST(ArrayViewTest, FromEigenOfColumnVectorIsNByOne) {
  const Array a = from_eigen(Eigen::Vector3d(1, 2, 3));
  EXPECT_TRUE(array_equal(a, Array::from_values<double>({3, 1}, {1, 2, 3})));
}

TEST(ArrayViewTest, TensorViewIndexesRowMajor) {
  const Array a = Array::iota({2, 3, 4}, DType::kInt32);
  const auto t = tensor_view<int32_t, 3>(a);
  EXPECT_EQ(t.dimension(0), 2);
  EXPECT_EQ(t.dimension(2), 4);
  EXPECT_EQ(t(0, 1, 2), 6);
  EXPECT_EQ(t(1, 2, 3), 23);
}

TEST(ArrayViewTest, MutableTensorViewWritesOnlyItsArray) {
  const Array a = Array::zeros({2, 2, 2}, DType::kFloat32);
  Array b = a;
  mutable_tensor_view<float, 3>(b)(1, 0, 1) = 5.0f;
  EXPECT_EQ(b.at<float>({1, 0, 1}), 5.0f);
  EXPECT_EQ(a.at<float>({1, 0, 1}), 0.0f);
}

// Views of a shared storage write only their own Array (copy-on-write).
TEST(ArrayViewTest, EveryMutableViewUnshares) {
  const Array a = Array::iota({2, 2}, DType::kFloat32);
  Array via_matrix = a, via_vector = a, via_tensor = a;
  mutable_matrix_view<float>(via_matrix)(0, 1) = 9.0f;
  mutable_vector_view<float>(via_vector)(1) = 9.0f;
  mutable_tensor_view<float, 2>(via_tensor)(0, 1) = 9.0f;
  const Array expected = Array::from_values<float>({2, 2}, {0, 9, 2, 3});
  for (const Array* copy : {&via_matrix, &via_vector, &via_tensor}) {
    EXPECT_FALSE(copy->shares_storage_with(a));
    EXPECT_TRUE(array_equal(*copy, expected)) << *copy;
  }
  EXPECT_TRUE(array_equal(a, Array::iota({2, 2}, DType::kFloat32)));
}

TEST(ArrayViewTest, VectorViewSeesEveryElement) {
  Array a = Array::iota({4, 5}, DType::kFloat64);
  EXPECT_EQ(vector_view<double>(a).sum(), 190.0);
  mutable_vector_view<double>(a) *= 2.0;
  EXPECT_EQ(a.at<double>({3, 4}), 38.0);
}

TEST(ArrayViewTest, ViewsCheckRankAndDType) {
  const Array a = Array::zeros({2, 2, 2}, DType::kFloat32);
  EXPECT_ERROR(matrix_view<float>(a), ShapeError,
               "matrix_view needs rank 2, got an array of shape (2, 2, 2)");
  EXPECT_ERROR((tensor_view<float, 2>(a)), ShapeError,
               "tensor_view needs rank 2, got an array of shape (2, 2, 2)");
  EXPECT_ERROR((tensor_view<double, 3>(a)), DTypeError, "<float64> of a float32 array");
}

}  // namespace
}  // namespace meshsim::array_views_test
