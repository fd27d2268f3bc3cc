// The GoogleTest matchers of meshsim/testing/array_matchers.h: what they
// accept, and the messages a failure prints (description and explanation).

#include "meshsim/testing/array_matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::array_matchers_test {
namespace {

// The explanation gmock prints after "Actual: ... " when `m` rejects `a`.
std::string explain(const ::testing::Matcher<const Array&>& m, const Array& a) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(m.MatchAndExplain(a, &listener));
  return listener.str();
}

TEST(ArrayMatchersTest, ArrayEqAcceptsBitwiseEqualArrays) {
  const Array a = Array::iota({2, 3}, DType::kInt32);
  EXPECT_THAT(a, ArrayEq(a.clone()));
  EXPECT_THAT(a, ::testing::Not(ArrayEq(a.astype(DType::kInt64))));
  EXPECT_THAT(Array::scalar(0.0f), ::testing::Not(ArrayEq(Array::scalar(-0.0f))));
  EXPECT_THAT(Array::zeros({0, 2}, DType::kBool), ArrayEq(Array::empty({0, 2}, DType::kBool)));
}

TEST(ArrayMatchersTest, ArrayEqExplainsFirstDifferenceWithMultiIndex) {
  const Array expected = Array::iota({2, 3}, DType::kInt32);
  Array actual = expected.clone();
  actual.set<int32_t>({1, 0}, 7);
  actual.set<int32_t>({1, 2}, 9);
  EXPECT_EQ(explain(ArrayEq(expected), actual),
            "first difference at index (1, 0): 7 vs 3 (actual vs expected)");
  EXPECT_EQ(explain(ArrayEq(expected), expected.astype(DType::kFloat32)),
            "dtypes differ: float32 vs int32 (actual vs expected)");
  EXPECT_EQ(explain(ArrayEq(expected), expected.reshape({3, 2})),
            "shapes differ: (3, 2) vs (2, 3) (actual vs expected)");
  EXPECT_EQ(::testing::DescribeMatcher<const Array&>(ArrayEq(Array::iota({2}, DType::kUInt8))),
            "is bitwise equal to [0 1] dtype=uint8 shape=(2)");
  EXPECT_EQ(::testing::DescribeMatcher<const Array&>(ArrayEq(Array::iota({2}, DType::kUInt8)),
                                                     /*negation=*/true),
            "is not bitwise equal to [0 1] dtype=uint8 shape=(2)");
}

TEST(ArrayMatchersTest, ArrayNearUsesTolerances) {
  const Array expected = Array::from_values<double>({2}, {1.0, 100.0});
  EXPECT_THAT(Array::from_values<double>({2}, {1.0 + 1e-6, 100.0}), ArrayNear(expected));
  EXPECT_THAT(Array::from_values<double>({2}, {1.001, 100.0}),
              ::testing::Not(ArrayNear(expected)));
  EXPECT_THAT(Array::from_values<double>({2}, {1.001, 100.1}), ArrayNear(expected, 1e-2));
  EXPECT_THAT(Array::from_values<double>({2}, {1.5, 100.0}), ArrayNear(expected, 0, 0.5));
  EXPECT_THAT(Array::scalar(std::numeric_limits<float>::quiet_NaN()),
              ::testing::Not(ArrayNear(Array::scalar(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_ERROR(ArrayNear(expected, -1), InvalidArgumentError, "must be >= 0");
}

TEST(ArrayMatchersTest, ArrayNearExplainsFirstElementOutOfTolerance) {
  const Array expected = Array::from_values<float>({2, 2}, {1, 2, 3, 4});
  const Array actual = Array::from_values<float>({2, 2}, {1, 2.5f, 3, 5});
  EXPECT_EQ(explain(ArrayNear(expected, 0.1, 0), actual),
            "first element out of tolerance at index (0, 1): 2.5 vs 2 (|a - b| = 0.5, atol + "
            "rtol * |b| = 0.2); 2 of 4 elements out of tolerance (actual vs expected)");
  EXPECT_EQ(explain(ArrayNear(expected), actual.astype(DType::kFloat64)),
            "dtypes differ: float64 vs float32 (actual vs expected)");
  EXPECT_EQ(explain(ArrayNear(expected), actual.reshape({4})),
            "shapes differ: (4) vs (2, 2) (actual vs expected)");
  EXPECT_EQ(::testing::DescribeMatcher<const Array&>(ArrayNear(Array::scalar(1.0), 0.01, 0.5)),
            "is close (rtol 0.01, atol 0.5) to 1 dtype=float64 shape=()");
}

TEST(ArrayMatchersTest, FirstNotCloseIsEmptyWhenClose) {
  const Array a = Array::iota({3}, DType::kBFloat16);
  EXPECT_EQ(first_not_close(a, a), "");
  EXPECT_EQ(first_not_close(Array::zeros({0}, DType::kInt8), Array::zeros({0}, DType::kInt8)), "");
}

}  // namespace
}  // namespace meshsim::array_matchers_test
