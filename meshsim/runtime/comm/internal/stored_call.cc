#include "meshsim/runtime/comm/internal/stored_call.h"

#include <algorithm>

namespace meshsim {

bool StoredCall::store(const CollectiveCall& call) {
  if (view().same_as(call)) return true;
  call_ = call;
  std::ranges::copy(call.shape, shape_.begin());
  std::ranges::copy(call.list, list_.begin());
  call_.shape = {shape_.data(), call.shape.size()};
  call_.list = {list_.data(), call.list.size()};
  return false;
}

}  // namespace meshsim
