#include "meshsim/runtime/array/array.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/internal/counted_array.h"
#include "support/expect_error.h"

namespace meshsim::array_test {
namespace {

// x as a T; for bool, x != 0.
template <class T>
T of(double x) {
  if constexpr (std::is_same_v<T, bool>) {
    return x != 0;
  } else {
    return static_cast<T>(x);
  }
}

template <class T>
class ArrayTypedTest : public ::testing::Test {
 protected:
  static constexpr DType kDType = dtype_of<T>();
  // What iota puts at row-major position i.
  static T iota_value(int64_t i) { return of<T>(std::is_same_v<T, bool> ? i % 2 : i); }
};

struct DTypeNames {
  template <class T>
  static std::string GetName(int) {
    return std::string(dtype_name(dtype_of<T>()));
  }
};

using AllTypes = ::testing::Types<bool, int8_t, int32_t, int64_t, uint8_t, uint32_t, Eigen::half,
                                  Eigen::bfloat16, float, double>;
TYPED_TEST_SUITE(ArrayTypedTest, AllTypes, DTypeNames);

TYPED_TEST(ArrayTypedTest, IotaCountsInRowMajorOrder) {
  const Array a = Array::iota({2, 3}, this->kDType);
  EXPECT_EQ(a.dtype(), this->kDType);
  EXPECT_EQ(a.shape(), (Shape{2, 3}));
  EXPECT_EQ(a.rank(), 2);
  EXPECT_EQ(a.size(), 6);
  EXPECT_EQ(a.nbytes(), 6 * sizeof(TypeParam));
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(a.at<TypeParam>({i, j}), this->iota_value(3 * i + j)) << i << ", " << j;
    }
  }
}

TYPED_TEST(ArrayTypedTest, ZerosAndFull) {
  const Array zeros = Array::zeros({2, 2}, this->kDType);
  for (TypeParam x : zeros.span<TypeParam>()) EXPECT_EQ(x, of<TypeParam>(0));
  const Array fives = Array::full({3}, this->kDType, 5);
  for (TypeParam x : fives.span<TypeParam>()) EXPECT_EQ(x, of<TypeParam>(5));
}

TYPED_TEST(ArrayTypedTest, ScalarHasRankZeroAndOneElement) {
  const Array a = Array::scalar(of<TypeParam>(7));
  EXPECT_EQ(a.dtype(), this->kDType);
  EXPECT_EQ(a.rank(), 0);
  EXPECT_EQ(a.size(), 1);
  EXPECT_EQ(a.at<TypeParam>({}), of<TypeParam>(7));
}

TYPED_TEST(ArrayTypedTest, FromValuesKeepsRowMajorOrder) {
  const std::array<TypeParam, 4> values = {of<TypeParam>(1), of<TypeParam>(0), of<TypeParam>(3),
                                           of<TypeParam>(2)};
  const Array a = Array::from_values<TypeParam>({2, 2}, values);
  EXPECT_EQ(a.at<TypeParam>({0, 0}), values[0]);
  EXPECT_EQ(a.at<TypeParam>({0, 1}), values[1]);
  EXPECT_EQ(a.at<TypeParam>({1, 0}), values[2]);
  EXPECT_EQ(a.at<TypeParam>({1, 1}), values[3]);
}

TYPED_TEST(ArrayTypedTest, SetWritesOneElement) {
  Array a = Array::zeros({2, 3}, this->kDType);
  a.set<TypeParam>({1, 2}, of<TypeParam>(1));
  const std::span<const TypeParam> values = a.span<TypeParam>();
  for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(values[i], of<TypeParam>(i == 5 ? 1 : 0));
}

TYPED_TEST(ArrayTypedTest, StorageIs64ByteAligned) {
  Array a = Array::iota({7}, this->kDType);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.bytes()) % 64, 0u);
  const Array copy = a;
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.mutable_bytes()) % 64, 0u);  // after unsharing
}

TYPED_TEST(ArrayTypedTest, AstypeThroughFloat64RoundTrips) {
  const Array a = Array::iota({2, 3}, this->kDType);
  const Array back = a.astype(DType::kFloat64).astype(this->kDType);
  EXPECT_TRUE(array_equal(a, back)) << first_difference(a, back);
}

TYPED_TEST(ArrayTypedTest, FirstDifferenceNamesIndexOfChangedElement) {
  const Array a = Array::iota({2, 3}, this->kDType);
  Array b = a.clone();
  EXPECT_EQ(first_difference(a, b), "");
  EXPECT_TRUE(allclose(a, b));
  b.set<TypeParam>({1, 1}, of<TypeParam>(1));  // iota has 4 (bool: false) there
  EXPECT_FALSE(array_equal(a, b));
  EXPECT_NE(first_difference(a, b).find("index (1, 1)"), std::string::npos)
      << first_difference(a, b);
}

TEST(ShapeTest, NumElementsAndToString) {
  EXPECT_EQ(num_elements(Shape{}), 1);
  EXPECT_EQ(num_elements(Shape{2, 3}), 6);
  EXPECT_EQ(num_elements(Shape{2, 0, 5}), 0);
  EXPECT_EQ(shape_to_string(Shape{}), "()");
  EXPECT_EQ(shape_to_string(Shape{4}), "(4)");
  EXPECT_EQ(shape_to_string(Shape{4, 2}), "(4, 2)");
}

TEST(ShapeTest, OverflowingShapeIsAnError) {
  EXPECT_ERROR(num_elements(Shape{int64_t{1} << 40, int64_t{1} << 40}), ShapeError,
               "shape (1099511627776, 1099511627776) has more than 2^63 elements");
}

TEST(ArrayTest, DefaultIsEmptyFloat32WithoutStorage) {
  const Array a;
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_EQ(a.shape(), Shape{0});
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(a.nbytes(), 0u);
  EXPECT_EQ(a.bytes(), nullptr);
  EXPECT_FALSE(a.shares_storage_with(Array()));
}

// A moved-from Array is a scalar zero of its dtype: every use reads that,
// never the storage the move took; writing it copies the shared zero first.
TEST(ArrayTest, MovedFromIsAScalarZeroOfItsDType) {
  Array a = Array::iota({4}, DType::kFloat64);
  const Array b = std::move(a);
  EXPECT_EQ(b.shape(), Shape{4});
  EXPECT_EQ(b.at<double>({3}), 3.0);
  EXPECT_EQ(a.dtype(), DType::kFloat64);  // NOLINT(bugprone-use-after-move): the point
  EXPECT_EQ(a.shape(), Shape{});
  EXPECT_EQ(a.size(), 1);
  EXPECT_EQ(a.nbytes(), 8u);
  EXPECT_EQ(a.at<double>({}), 0.0);
  EXPECT_EQ(a.astype(DType::kInt32).at<int32_t>({}), 0);
  EXPECT_EQ(a.to_string(), "0 dtype=float64 shape=()");
  const std::byte* zero = a.bytes();
  a.set<double>({}, 2.5);  // unshares: the zero stays zero
  EXPECT_NE(a.bytes(), zero);
  EXPECT_EQ(a.at<double>({}), 2.5);
  Array c = Array::iota({2}, DType::kInt8);
  Array d;
  d = std::move(c);
  EXPECT_EQ(d.at<int8_t>({1}), 1);
  EXPECT_EQ(c.at<int8_t>({}), 0);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(Array(std::move(c)).at<int8_t>({}), 0);  // NOLINT(bugprone-use-after-move)
  d = std::move(d);  // self-move keeps the value
  EXPECT_EQ(d.at<int8_t>({1}), 1);
}

TEST(ArrayTest, ZeroElementArraysWork) {
  const Array a = Array::zeros({0, 3}, DType::kInt32);
  EXPECT_EQ(a.size(), 0);
  EXPECT_EQ(a.rank(), 2);
  EXPECT_EQ(a.reshape({3, 0}).shape(), (Shape{3, 0}));
  EXPECT_TRUE(array_equal(a, Array::empty({0, 3}, DType::kInt32)));
  EXPECT_TRUE(array_equal(a.clone(), a));
  EXPECT_EQ(a.to_string(), "[] dtype=int32 shape=(0, 3)");
}

TEST(ArrayTest, EmptyLikeHasTheShapeInTheGivenDTypeAndStorageOfItsOwn) {
  const Array like = Array::iota({2, 3, 5}, DType::kBool);
  Array out = Array::empty_like(like, DType::kFloat64);
  EXPECT_EQ(out.shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(out.size(), 30);
  EXPECT_EQ(out.dtype(), DType::kFloat64);
  EXPECT_EQ(out.nbytes(), 30 * sizeof(double));
  EXPECT_FALSE(out.shares_storage_with(like));
  std::ranges::fill(out.mutable_span<double>(), 9.0);
  EXPECT_TRUE(array_equal(like, Array::iota({2, 3, 5}, DType::kBool)));
  // Rank 7, past the shape's inline capacity; and no elements, no storage.
  const Array deep = Array::zeros({1, 2, 1, 2, 1, 2, 3}, DType::kInt8);
  EXPECT_EQ(Array::empty_like(deep, DType::kInt32).shape(), deep.shape());
  EXPECT_EQ(Array::empty_like(deep, DType::kInt32).nbytes(), 24 * sizeof(int32_t));
  const Array none = Array::zeros({4, 0, int64_t{1} << 40}, DType::kUInt8);
  EXPECT_EQ(Array::empty_like(none, DType::kFloat64).bytes(), nullptr);
  EXPECT_EQ(Array::empty_like(none, DType::kFloat64).shape(), none.shape());
}

TEST(ArrayTest, EmptyCountedTakesTheGivenCountAndStillChecksTheBytes) {
  const Array a = detail::empty_counted({3, 4}, 12, DType::kFloat16);
  EXPECT_EQ(a.shape(), (Shape{3, 4}));
  EXPECT_EQ(a.size(), 12);
  EXPECT_EQ(a.nbytes(), 24u);
  EXPECT_EQ(detail::empty_counted({0, 5}, 0, DType::kFloat32).bytes(), nullptr);
  const int64_t too_many = Array::kMaxBytes / 8 + 1;
  EXPECT_THROW((void)detail::empty_counted({too_many}, too_many, DType::kFloat64), ShapeError);
}

TEST(ArrayTest, DimCountsNegativeFromTheEnd) {
  const Array a = Array::zeros({2, 3}, DType::kFloat32);
  EXPECT_EQ(a.dim(0), 2);
  EXPECT_EQ(a.dim(-1), 3);
  EXPECT_EQ(a.dim(-2), 2);
  EXPECT_ERROR(a.dim(2), ShapeError, "dim 2 is out of range for shape (2, 3)");
  EXPECT_ERROR(a.dim(-3), ShapeError, "dim -3 is out of range for shape (2, 3)");
}

TEST(ArrayTest, CopySharesStorageAndWritingUnshares) {
  const Array a = Array::iota({4}, DType::kInt32);
  Array b = a;
  EXPECT_TRUE(b.shares_storage_with(a));
  b.mutable_span<int32_t>()[0] = 42;
  EXPECT_FALSE(b.shares_storage_with(a));
  EXPECT_EQ(a.at<int32_t>({0}), 0);
  EXPECT_EQ(b.at<int32_t>({0}), 42);
  // b is now the only owner of its storage: writes go in place.
  const std::byte* before = b.bytes();
  b.set<int32_t>({1}, 7);
  EXPECT_EQ(b.bytes(), before);
}

TEST(ArrayTest, EveryMutableAccessorUnshares) {
  const Array a = Array::iota({2, 2}, DType::kFloat32);
  Array via_bytes = a, via_span = a, via_set = a;
  via_bytes.mutable_bytes()[0] = std::byte{1};
  via_span.mutable_span<float>()[0] = 9.0f;
  via_set.set<float>({0, 0}, 9.0f);
  for (const Array* copy : {&via_bytes, &via_span, &via_set}) {
    EXPECT_FALSE(copy->shares_storage_with(a));
  }
  EXPECT_TRUE(array_equal(a, Array::iota({2, 2}, DType::kFloat32)));
}

// Copies sharing one storage are written from many threads at once, while no
// one else holds it: each must read the shared values, then write only its
// own copy (the last to unshare may write in place).
TEST(ArrayTest, ConcurrentWritersOfSharedStorageEachGetTheirOwnCopy) {
  constexpr int kThreads = 8;
  constexpr int64_t kSize = 4096;
  std::vector<Array> copies(kThreads, Array::iota({kSize}, DType::kInt64));
  std::vector<int64_t> sums(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&copies, &sums, t] {
      const std::span<const int64_t> shared = copies[t].span<int64_t>();
      sums[t] = std::accumulate(shared.begin(), shared.end(), int64_t{0});
      std::ranges::fill(copies[t].mutable_span<int64_t>(), t);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(sums[t], kSize * (kSize - 1) / 2);
    EXPECT_TRUE(array_equal(copies[t], Array::full({kSize}, DType::kInt64, t))) << t;
  }
}

TEST(ArrayTest, ReshapeSharesStorageAndInfersMinusOne) {
  const Array a = Array::iota({2, 3}, DType::kInt32);
  const Array b = a.reshape({3, 2});
  EXPECT_TRUE(b.shares_storage_with(a));
  EXPECT_EQ(b.at<int32_t>({2, 1}), 5);
  EXPECT_EQ(a.reshape({-1}).shape(), Shape{6});
  EXPECT_EQ(a.reshape({1, -1, 2}).shape(), (Shape{1, 3, 2}));
  EXPECT_EQ(Array::scalar(1).reshape({1, 1}).shape(), (Shape{1, 1}));
}

TEST(ArrayTest, CloneIsDeep) {
  const Array a = Array::iota({2, 3}, DType::kFloat32);
  Array b = a.clone();
  EXPECT_FALSE(b.shares_storage_with(a));
  EXPECT_TRUE(array_equal(a, b));
  const std::byte* before = b.bytes();
  b.set<float>({0, 0}, 1.5f);
  EXPECT_EQ(b.bytes(), before);
  EXPECT_EQ(a.at<float>({0, 0}), 0.0f);
}

TEST(ArrayTest, AstypeKnownAnswers) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Array floats = Array::from_values<float>({6}, {2.7f, -2.7f, 0.5f, 1e10f, -1e10f, nan});
  EXPECT_TRUE(array_equal(floats.astype(DType::kInt32),
                          Array::from_values<int32_t>({6}, {2, -2, 0, INT32_MAX, INT32_MIN, 0})));
  EXPECT_TRUE(array_equal(floats.astype(DType::kBool),
                          Array::from_values<bool>({6}, {true, true, true, true, true, true})));
  EXPECT_TRUE(array_equal(Array::from_values<int32_t>({3}, {0, 3, -1}).astype(DType::kBool),
                          Array::from_values<bool>({3}, {false, true, true})));
  EXPECT_TRUE(array_equal(Array::from_values<bool>({2}, {true, false}).astype(DType::kFloat32),
                          Array::from_values<float>({2}, {1, 0})));
  EXPECT_TRUE(array_equal(Array::from_values<int32_t>({2}, {300, -1}).astype(DType::kUInt8),
                          Array::from_values<uint8_t>({2}, {44, 255})));
  EXPECT_EQ(Array::scalar(1.0f / 3).astype(DType::kBFloat16).at<Eigen::bfloat16>({}),
            Eigen::bfloat16(1.0f / 3));
  const Array same = floats.astype(DType::kFloat32);
  EXPECT_TRUE(same.shares_storage_with(floats));
}

TEST(ArrayTest, ArrayEqualIsBitwise) {
  const Array zero = Array::from_values<float>({1}, {0.0f});
  const Array negative_zero = Array::from_values<float>({1}, {-0.0f});
  EXPECT_FALSE(array_equal(zero, negative_zero));
  EXPECT_TRUE(allclose(zero, negative_zero));
  EXPECT_EQ(first_difference(zero, negative_zero), "first difference at index (0): 0 vs -0");
  const Array nan = Array::scalar(std::numeric_limits<double>::quiet_NaN());
  EXPECT_TRUE(array_equal(nan, nan.clone()));
  EXPECT_FALSE(allclose(nan, nan));
  EXPECT_FALSE(array_equal(Array::zeros({2}, DType::kInt32), Array::zeros({2}, DType::kUInt32)));
  EXPECT_FALSE(
      array_equal(Array::zeros({2, 3}, DType::kInt32), Array::zeros({3, 2}, DType::kInt32)));
}

TEST(ArrayTest, AllcloseUsesRelativeAndAbsoluteTolerance) {
  const Array a = Array::from_values<double>({2}, {1.0, 100.0});
  EXPECT_TRUE(allclose(a, Array::from_values<double>({2}, {1.0 + 1e-6, 100.0})));
  EXPECT_FALSE(allclose(a, Array::from_values<double>({2}, {1.001, 100.0})));
  EXPECT_TRUE(allclose(a, Array::from_values<double>({2}, {1.001, 100.0}), 1e-2));
  EXPECT_TRUE(allclose(a, Array::from_values<double>({2}, {1.5, 100.0}), 0, 0.5));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(allclose(Array::scalar(inf), Array::scalar(inf)));
  EXPECT_FALSE(allclose(Array::scalar(inf), Array::scalar(-inf)));
  EXPECT_FALSE(allclose(a, a.astype(DType::kFloat32)));
  EXPECT_FALSE(allclose(a, a.reshape({2, 1})));
}

TEST(ArrayTest, FirstDifferenceMessages) {
  const Array a = Array::iota({2, 3}, DType::kInt32);
  Array b = a.clone();
  b.set<int32_t>({1, 2}, 9);
  EXPECT_EQ(first_difference(a, b), "first difference at index (1, 2): 5 vs 9");
  EXPECT_EQ(first_difference(a, a.astype(DType::kFloat32)), "dtypes differ: int32 vs float32");
  EXPECT_EQ(first_difference(a, a.reshape({3, 2})), "shapes differ: (2, 3) vs (3, 2)");
  EXPECT_EQ(first_difference(a, a), "");
}

TEST(ArrayTest, ToStringOfSmallArrays) {
  EXPECT_EQ(Array::iota({2, 3}, DType::kInt32).to_string(),
            "[[0 1 2]\n [3 4 5]] dtype=int32 shape=(2, 3)");
  EXPECT_EQ(Array::iota({2, 2, 2}, DType::kUInt8).to_string(),
            "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]] dtype=uint8 shape=(2, 2, 2)");
  EXPECT_EQ(Array::from_values<float>({3}, {0.5f, -1.25f, 1e10f}).to_string(),
            "[  0.5 -1.25 1e+10] dtype=float32 shape=(3)");
  EXPECT_EQ(Array::scalar(true).to_string(), "true dtype=bool shape=()");
  std::ostringstream os;
  os << Array::iota({2}, DType::kBFloat16);
  EXPECT_EQ(os.str(), "[0 1] dtype=bfloat16 shape=(2)");
}

TEST(ArrayTest, ToStringAbbreviatesLargeArrays) {
  EXPECT_EQ(Array::iota({2000}, DType::kInt32).to_string(),
            "[   0    1    2 ... 1997 1998 1999] dtype=int32 shape=(2000)");
  const std::string big = Array::iota({1000, 1000}, DType::kFloat32).to_string();
  EXPECT_NE(big.find("..."), std::string::npos);
  EXPECT_LT(big.size(), 400u) << big;
}

TEST(ArrayErrorTest, SpanOfWrongDTypeNamesBoth) {
  const Array a = Array::zeros({2, 2}, DType::kFloat32);
  EXPECT_ERROR(a.span<int32_t>(), DTypeError, "span<int32> of a float32 array of shape (2, 2)");
  EXPECT_ERROR(a.at<double>({0, 0}), DTypeError, "at<float64> of a float32 array");
  Array b = a;
  EXPECT_ERROR(b.set({0, 0}, 1.0), DTypeError, "set<float64> of a float32 array");
}

TEST(ArrayErrorTest, ReshapeNamesBothShapes) {
  const Array a = Array::iota({2, 3}, DType::kInt32);
  const std::string prefix = "cannot reshape an array of shape (2, 3) into ";
  EXPECT_ERROR(a.reshape({4, 2}), ShapeError, prefix + "(4, 2): it has 6 elements, not 8");
  EXPECT_ERROR(a.reshape({-1, -1}), ShapeError, prefix + "(-1, -1): more than one -1");
  EXPECT_ERROR(a.reshape({4, -1}), ShapeError,
               prefix + "(4, -1): no dim in place of -1 gives 6 elements");
  EXPECT_ERROR(a.reshape({-2, -3}), ShapeError, prefix + "(-2, -3): negative dim");
}

TEST(ArrayErrorTest, FromValuesCountMismatchNamesShapeAndCount) {
  EXPECT_ERROR(Array::from_values<float>({2, 2}, {1, 2, 3}), ShapeError,
               "3 values given for shape (2, 2), which has 4 elements");
}

TEST(ArrayErrorTest, AtOutOfBoundsNamesIndexAndShape) {
  const Array a = Array::iota({2, 3}, DType::kInt32);
  const std::string suffix = " is out of bounds for shape (2, 3)";
  EXPECT_ERROR(a.at<int32_t>({2, 0}), ShapeError, "index (2, 0)" + suffix);
  EXPECT_ERROR(a.at<int32_t>({0, -1}), ShapeError, "index (0, -1)" + suffix);
  EXPECT_ERROR(a.at<int32_t>({1}), ShapeError, "index (1)" + suffix);
}

TEST(ArrayErrorTest, NegativeDimNamesShape) {
  EXPECT_ERROR(Array::zeros({2, -1}, DType::kFloat32), ShapeError, "negative dim in shape (2, -1)");
  EXPECT_ERROR(Array::from_values<int32_t>({-1}, {}), ShapeError, "negative dim in shape (-1)");
}

}  // namespace
}  // namespace meshsim::array_test
