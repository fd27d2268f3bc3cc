#include "meshsim/runtime/time/callback_model.h"

#include <cmath>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/time/internal/seconds_text.h"

namespace meshsim {

CallbackModel::CallbackModel(std::function<double(const Transfer&)> arrival,
                             std::function<void()> reset)
    : arrival_(std::move(arrival)), reset_(std::move(reset)) {
  if (!arrival_) throw InvalidArgumentError("CallbackModel: the arrival function is empty");
}

double CallbackModel::arrival(const Transfer& transfer) {
  check(transfer);
  const double time = arrival_(transfer);
  if (!std::isfinite(time) || time < transfer.departure) {
    throw InvalidArgumentError("CallbackModel: the arrival function returned " +
                               seconds_text(time) + " for " + describe(transfer) +
                               "; expected a finite time >= the departure");
  }
  return time;
}

void CallbackModel::reset() {
  if (reset_) reset_();
}

}  // namespace meshsim
