// Edge sizes of Array (issue 9 items 5 and 6): shapes whose byte count
// overflows or exceeds Array::kMaxBytes are ShapeErrors naming the shape, and
// every Array function works on arrays with a zero dim (run under ASan + UBSan:
// no memcpy / memcmp / memset with a null pointer).

#include "meshsim/runtime/array/array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/tensor_views.h"
#include "meshsim/runtime/array/internal/box_copy.h"
#include "support/expect_error.h"

namespace meshsim::array_limits_test {
namespace {

constexpr int64_t kTwo61 = int64_t{1} << 61;
constexpr int64_t kTwo62 = int64_t{1} << 62;

using Factory = std::function<Array(Shape, DType)>;

std::vector<std::pair<std::string, Factory>> factories() {
  return {
      {"empty", [](Shape s, DType d) { return Array::empty(std::move(s), d); }},
      {"zeros", [](Shape s, DType d) { return Array::zeros(std::move(s), d); }},
      {"full", [](Shape s, DType d) { return Array::full(std::move(s), d, 1.0); }},
      {"iota", [](Shape s, DType d) { return Array::iota(std::move(s), d); }},
  };
}

// 2^61 float64 elements are 2^64 bytes: the product used to wrap to 0 (null
// storage) and 2^61 + 1 to 8 (one element allocated for 2^61 + 1).
TEST(ArrayLimitsTest, ByteCountOverflowIsShapeErrorNamingShape) {
  for (const auto& [name, make] : factories()) {
    SCOPED_TRACE(name);
    EXPECT_ERROR(make({kTwo61}, DType::kFloat64), ShapeError,
                 "shape (2305843009213693952) of float64 has 2305843009213693952 elements of 8 "
                 "bytes: more than the 2^47 bytes (128 TiB) an Array may hold");
    EXPECT_ERROR(make({kTwo61 + 1}, DType::kFloat64), ShapeError,
                 "shape (2305843009213693953) of float64");
    EXPECT_ERROR(make({kTwo62}, DType::kFloat32), ShapeError, "shape (4611686018427387904) of");
    EXPECT_ERROR(make({kTwo61, 2}, DType::kInt8), ShapeError, "shape (2305843009213693952, 2)");
    EXPECT_ERROR(make({2, kTwo62}, DType::kBool), ShapeError, "shape (2, 4611686018427387904)");
    // Just above the limit in bytes, far below it in elements.
    EXPECT_ERROR(make({(Array::kMaxBytes / 2) + 1}, DType::kFloat16), ShapeError,
                 "more than the 2^47 bytes");
  }
}

TEST(ArrayLimitsTest, ElementCountOverflowAndNegativeDimsAreShapeErrors) {
  for (const auto& [name, make] : factories()) {
    SCOPED_TRACE(name);
    EXPECT_ERROR(make({kTwo62, 4}, DType::kInt8), ShapeError,
                 "shape (4611686018427387904, 4) has more than 2^63 elements");
    EXPECT_ERROR(make({3, int64_t{1} << 32, int64_t{1} << 32}, DType::kInt8), ShapeError,
                 "shape (3, 4294967296, 4294967296) has more than 2^63 elements");
    EXPECT_ERROR(make({-1}, DType::kFloat32), ShapeError, "negative dim in shape (-1)");
    EXPECT_ERROR(make({0, -5}, DType::kFloat32), ShapeError, "negative dim in shape (0, -5)");
    EXPECT_ERROR(make({std::numeric_limits<int64_t>::min()}, DType::kFloat32), ShapeError,
                 "negative dim in shape (-9223372036854775808)");
  }
}

TEST(ArrayLimitsTest, FromValuesWithHugeShapeIsShapeError) {
  const std::vector<double> none;
  EXPECT_ERROR(Array::from_values<double>({kTwo61}, none), ShapeError,
               "0 values given for shape (2305843009213693952)");
  EXPECT_ERROR(Array::from_values<double>({kTwo61 + 1}, none), ShapeError,
               "shape (2305843009213693953)");
  EXPECT_ERROR(Array::from_values<double>({kTwo62}, none), ShapeError,
               "shape (4611686018427387904)");
  EXPECT_ERROR(Array::from_values<double>({kTwo62, 4}, none), ShapeError,
               "has more than 2^63 elements");
  EXPECT_ERROR(Array::from_values<double>({2, -3}, none), ShapeError,
               "negative dim in shape (2, -3)");
}

// Under kMaxBytes but more than this machine has: the allocator's refusal is
// a ShapeError with the byte count, not a std::bad_alloc.
TEST(ArrayLimitsTest, AllocatorRefusalIsShapeErrorNamingBytes) {
  const int64_t n = int64_t{1} << 46;  // 64 TiB of int8
  try {
    const Array a = Array::empty({n}, DType::kInt8);
    GTEST_SKIP() << "this machine mapped 64 TiB (overcommit); nothing to check";
  } catch (const ShapeError& e) {
    EXPECT_EQ(std::string(e.what()),
              "shape (70368744177664) of int8 has 70368744177664 elements of 1 bytes: the "
              "allocator could not provide 70368744177664 bytes");
  }
}

TEST(ArrayLimitsTest, LargestShapesUnderTheLimitStillReshape) {
  // reshape allocates nothing; only the element count is checked.
  const Array a = Array::zeros({0, 4}, DType::kFloat64);
  EXPECT_ERROR(a.reshape({kTwo62, 4}), ShapeError, "has more than 2^63 elements");
  EXPECT_EQ(a.reshape({kTwo62, 0}).shape(), (Shape{kTwo62, 0}));
}

// Every Array function on arrays with a zero dim, for every dtype.
class ZeroSizeTest : public ::testing::TestWithParam<DType> {};

TEST_P(ZeroSizeTest, EveryFunctionWorks) {
  const DType dtype = GetParam();
  for (const Shape& shape : {Shape{0}, Shape{3, 0}, Shape{0, 2, 5}}) {
    SCOPED_TRACE(shape_to_string(shape));
    for (const auto& [name, make] : factories()) {
      const Array a = make(shape, dtype);
      EXPECT_EQ(a.size(), 0);
      EXPECT_EQ(a.nbytes(), 0u);
      EXPECT_EQ(a.bytes(), nullptr) << name;
    }
    const Array a = Array::zeros(shape, dtype);
    Array copy = a;
    EXPECT_EQ(copy.mutable_bytes(), nullptr);
    EXPECT_TRUE(array_equal(a, a.clone()));
    EXPECT_TRUE(allclose(a, a.clone()));
    EXPECT_EQ(first_difference(a, Array::empty(shape, dtype)), "");
    EXPECT_FALSE(a.shares_storage_with(copy));
    for (DType to : kAllDTypes) {
      const Array cast = a.astype(to);
      EXPECT_EQ(cast.shape(), shape);
      EXPECT_EQ(cast.dtype(), to);
    }
    EXPECT_EQ(a.reshape({-1}).shape(), Shape{0});
    EXPECT_EQ(a.to_string(), "[] dtype=" + std::string(dtype_name(dtype)) +
                                 " shape=" + shape_to_string(shape));
    std::ostringstream os;
    os << a;
    EXPECT_EQ(os.str(), a.to_string());
    EXPECT_NE(first_difference(a, Array::zeros({0, 1}, dtype)), "");
  }
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, ZeroSizeTest, ::testing::ValuesIn(kAllDTypes),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(ZeroSizeTest, ValuesSpansAndViews) {
  const Array a = Array::from_values<float>({0, 3}, std::vector<float>{});
  EXPECT_TRUE(a.span<float>().empty());
  Array b = a;
  EXPECT_TRUE(b.mutable_span<float>().empty());
  EXPECT_EQ(matrix_view<float>(a).rows(), 0);
  EXPECT_EQ(matrix_view<float>(a).cols(), 3);
  EXPECT_EQ(mutable_matrix_view<float>(b).size(), 0);
  EXPECT_EQ(vector_view<float>(a).size(), 0);
  EXPECT_EQ(mutable_vector_view<float>(b).size(), 0);
  EXPECT_EQ((tensor_view<float, 2>(a).dimension(1)), 3);
  EXPECT_EQ((mutable_tensor_view<float, 2>(b).size()), 0);
  const Array from = from_eigen(RowMatrix<double>(0, 4));
  EXPECT_EQ(from.shape(), (Shape{0, 4}));
  EXPECT_TRUE(array_equal(from, Array::zeros({0, 4}, DType::kFloat64)));
  EXPECT_ERROR(a.at<float>({0, 0}), ShapeError, "index (0, 0) is out of bounds for shape (0, 3)");
}

TEST(ZeroSizeTest, BoxCopyOfEmptyBoxesCopiesNothing) {
  // A zero-size box between two empty arrays (null storage) and between two
  // non-empty ones: no pieces, no memcpy.
  const Array src = Array::zeros({0, 4}, DType::kInt32);
  Array dst = Array::zeros({0, 4}, DType::kInt32);
  const BoxCopy empty(4, Shape{0, 4}, src.shape(), Shape{0, 0}, dst.shape(), Shape{0, 0});
  EXPECT_EQ(empty.num_pieces(), 0);
  EXPECT_EQ(empty.bytes(), 0);
  empty.copy_all(src.bytes(), dst.mutable_bytes());
  const Array full_src = Array::iota({2, 3}, DType::kInt32);
  Array full_dst = Array::zeros({2, 3}, DType::kInt32);
  const BoxCopy none(4, Shape{2, 0}, full_src.shape(), Shape{0, 1}, full_dst.shape(),
                     Shape{0, 2});
  EXPECT_EQ(none.num_pieces(), 0);
  none.copy_all(full_src.bytes(), full_dst.mutable_bytes());
  EXPECT_TRUE(array_equal(full_dst, Array::zeros({2, 3}, DType::kInt32)));
}

}  // namespace
}  // namespace meshsim::array_limits_test
