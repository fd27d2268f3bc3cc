#include "meshsim/runtime/exec/internal/current_device.h"

namespace meshsim::detail {
constinit thread_local DeviceState* current_device = nullptr;
}  // namespace meshsim::detail
