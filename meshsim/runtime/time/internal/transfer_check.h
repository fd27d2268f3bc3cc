#pragma once
// The checks every model makes on a transfer before pricing it.

#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

// InvalidArgumentError naming the transfer unless bytes >= 0 and the
// departure is finite and >= 0. (Node ranges are the topology's to check.)
void check_transfer(const Transfer& transfer);

}  // namespace meshsim
