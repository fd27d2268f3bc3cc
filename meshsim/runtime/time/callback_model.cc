#include "meshsim/runtime/time/callback_model.h"

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/time/internal/transfer_check.h"

namespace meshsim {

CallbackModel::CallbackModel(std::function<double(const Transfer&)> arrival,
                             std::function<void()> reset)
    : arrival_(std::move(arrival)), reset_(std::move(reset)) {
  if (!arrival_) throw InvalidArgumentError("CallbackModel: the arrival function is empty");
}

double CallbackModel::arrival(const Transfer& transfer) {
  check(transfer);
  return checked_arrival(arrival_(transfer), transfer, "CallbackModel: the arrival function");
}

void CallbackModel::reset() {
  if (reset_) reset_();
}

}  // namespace meshsim
