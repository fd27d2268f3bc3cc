#pragma once
// GoogleTest matchers for Arrays: EXPECT_THAT(result, ArrayNear(expected)).
// Header-only; a test that includes it links gmock (GTest::gmock).
//
// On failure gmock prints the actual array, the description (with the
// expected array) and the explanation: a dtype or shape mismatch, or the
// first row-major element that differs / is out of tolerance, with its
// multi-index and both values (see first_difference / first_not_close).

#include <gmock/gmock.h>

#include <ostream>
#include <string>
#include <utility>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/array.h"

namespace meshsim {
namespace detail {

class ArrayMatcherImpl : public ::testing::MatcherInterface<const Array&> {
 public:
  // rtol < 0: bitwise equality (array_equal).
  ArrayMatcherImpl(Array expected, double rtol, double atol)
      : expected_(std::move(expected)), rtol_(rtol), atol_(atol) {}

  bool MatchAndExplain(const Array& actual,
                       ::testing::MatchResultListener* listener) const override {
    const std::string why = exact() ? first_difference(actual, expected_)
                                    : first_not_close(actual, expected_, rtol_, atol_);
    if (!why.empty()) *listener << why << " (actual vs expected)";
    return why.empty();
  }

  void DescribeTo(std::ostream* os) const override { describe(os, "is"); }
  void DescribeNegationTo(std::ostream* os) const override { describe(os, "is not"); }

 private:
  bool exact() const { return rtol_ < 0; }
  void describe(std::ostream* os, const char* verb) const {
    *os << verb;
    if (exact()) {
      *os << " bitwise equal to ";
    } else {
      *os << " close (rtol " << rtol_ << ", atol " << atol_ << ") to ";
    }
    *os << expected_;
  }

  Array expected_;
  double rtol_, atol_;
};

}  // namespace detail

// Same dtype, same shape, bitwise-equal elements (array_equal: -0.0 is not
// 0.0, a NaN matches the same NaN).
inline ::testing::Matcher<const Array&> ArrayEq(Array expected) {
  return ::testing::MakeMatcher(new detail::ArrayMatcherImpl(std::move(expected), -1, 0));
}

// Same dtype and shape and allclose(actual, expected, rtol, atol):
// |actual - expected| <= atol + rtol * |expected| elementwise in float64.
// InvalidArgumentError if rtol or atol is negative.
inline ::testing::Matcher<const Array&> ArrayNear(Array expected, double rtol = 1e-5,
                                                  double atol = 1e-8) {
  if (!(rtol >= 0 && atol >= 0)) {
    throw InvalidArgumentError("ArrayNear: rtol " + std::to_string(rtol) + " and atol " +
                               std::to_string(atol) + " must be >= 0");
  }
  return ::testing::MakeMatcher(new detail::ArrayMatcherImpl(std::move(expected), rtol, atol));
}

}  // namespace meshsim
