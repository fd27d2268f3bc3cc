// The NetworkModel interface: canonical order, transfer checks, and
// arrivals() pricing a set in canonical order whatever its listed order.

#include "meshsim/runtime/time/network_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/time/callback_model.h"
#include "support/expect_error.h"

namespace meshsim::network_model_test {
namespace {

TEST(NetworkModel, CanonicalOrderIsDepartureSourceDestinationSequence) {
  EXPECT_TRUE(canonically_before({5, 5, 1, 2.0, 9}, {0, 0, 1, 3.0, 0}));
  EXPECT_TRUE(canonically_before({1, 5, 1, 2.0, 9}, {2, 0, 1, 2.0, 0}));
  EXPECT_TRUE(canonically_before({1, 3, 1, 2.0, 9}, {1, 4, 1, 2.0, 0}));
  EXPECT_TRUE(canonically_before({1, 3, 1, 2.0, 0}, {1, 3, 1, 2.0, 1}));
  EXPECT_FALSE(
      canonically_before({1, 3, 1, 2.0, 1}, {1, 3, 99, 2.0, 1}));  // bytes are not in the key
}

TEST(NetworkModel, ArrivalsPricesInCanonicalOrderAndAnswersInListedOrder) {
  std::vector<int> seen;  // sources, in pricing order
  CallbackModel model([&](const Transfer& t) {
    seen.push_back(t.source);
    return t.departure + t.source;
  });
  std::vector<Transfer> transfers{
      {2, 0, 1, 1.0}, {0, 1, 1, 1.0}, {1, 0, 1, 0.5}, {0, 2, 1, 1.0, 1}};
  EXPECT_EQ(model.arrivals(transfers), (std::vector<double>{3.0, 1.0, 1.5, 1.0}));
  EXPECT_EQ(seen, (std::vector<int>{1, 0, 0, 2}));
}

TEST(NetworkModel, ArrivalsChecksEveryTransferBeforePricingAny) {
  int calls = 0;
  CallbackModel model([&](const Transfer& t) { return ++calls, t.departure; });
  std::vector<Transfer> transfers{{0, 1, 8, 0.0}, {0, 1, 8, std::nan("")}};
  EXPECT_ERROR(model.arrivals(transfers), InvalidArgumentError,
               "transfer 0 -> 1 (8 bytes, departing at nan s, sequence 0): departure must be a "
               "finite time >= 0");
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace meshsim::network_model_test
