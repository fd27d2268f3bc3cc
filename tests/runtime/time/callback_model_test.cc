// CallbackModel: the user's function prices transfers, reset is forwarded,
// and impossible answers are rejected with the transfer and the value.

#include "meshsim/runtime/time/callback_model.h"

#include <gtest/gtest.h>

#include <limits>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::callback_model_test {
namespace {

TEST(NetworkCallbackModel, ReturnsTheFunctionsArrival) {
  CallbackModel model([](const Transfer& t) { return t.departure + 0.5 + t.bytes / 4.0; });
  EXPECT_EQ(model.arrival({0, 1, 8, 1.0}), 3.5);
}

TEST(NetworkCallbackModel, ForwardsReset) {
  int resets = 0;
  CallbackModel model([](const Transfer& t) { return t.departure; }, [&] { ++resets; });
  model.reset();
  model.reset();
  EXPECT_EQ(resets, 2);
  CallbackModel without_reset([](const Transfer& t) { return t.departure; });
  without_reset.reset();  // no function: nothing to call
}

TEST(NetworkCallbackModel, RejectsImpossibleArrivalsAndTransfers) {
  EXPECT_ERROR(CallbackModel(nullptr), InvalidArgumentError, "the arrival function is empty");
  CallbackModel early([](const Transfer& t) { return t.departure - 1; });
  EXPECT_ERROR(early.arrival({2, 3, 16, 4.0}), InvalidArgumentError,
               "the arrival function returned 3 for transfer 2 -> 3 (16 bytes, departing at 4 s, "
               "sequence 0); expected a finite time >= the departure");
  CallbackModel infinite([](const Transfer&) { return std::numeric_limits<double>::infinity(); });
  EXPECT_ERROR(infinite.arrival({0, 1, 1, 0.0}), InvalidArgumentError, "returned inf");
  CallbackModel fine([](const Transfer& t) { return t.departure; });
  EXPECT_ERROR(fine.arrival({0, 1, -1, 0.0}), InvalidArgumentError,
               "transfer 0 -> 1 (-1 bytes, departing at 0 s, sequence 0): bytes must be >= 0");
  EXPECT_ERROR(fine.arrival({0, 1, 1, -0.5}), InvalidArgumentError,
               "departure must be a finite time >= 0");
}

}  // namespace
}  // namespace meshsim::callback_model_test
