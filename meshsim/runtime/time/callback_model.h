#pragma once
// CallbackModel: the user's own network model as a function, e.g. a bridge
// to an external network simulator that prices each message.

#include <functional>

#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

class CallbackModel final : public NetworkModel {
 public:
  // `arrival` prices one transfer; `reset` (optional) is called by reset().
  // InvalidArgumentError if `arrival` is empty.
  explicit CallbackModel(std::function<double(const Transfer&)> arrival,
                         std::function<void()> reset = {});
  // Copied, also where moved from: a moved-from model would have no function.
  CallbackModel(const CallbackModel&) = default;
  CallbackModel& operator=(const CallbackModel&) = default;

  // Calls the function after check() (bytes and departure; the nodes are
  // the function's to check). Throws InvalidArgumentError naming
  // the transfer and the value if the function returns a time that is not
  // finite or is before the departure. Order and thread-safety are the
  // function's.
  double arrival(const Transfer& transfer) override;
  void reset() override;

 private:
  std::function<double(const Transfer&)> arrival_;
  std::function<void()> reset_;
};

}  // namespace meshsim
