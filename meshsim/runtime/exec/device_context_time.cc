// DeviceContext's virtual-time methods (time/virtual_time.h).

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/device_state.h"

namespace meshsim {
namespace {

// The device is named with set_device, so the launch does not name it again.
void check_amount(int device, const char* what, double value) {
  if (!std::isfinite(value) || value < 0) {
    InvalidArgumentError error(std::string(what) + " of " + std::to_string(value) +
                               ": must be finite and >= 0");
    error.set_device(device);
    throw error;
  }
}

}  // namespace

double DeviceContext::now() const {
  check_usable("DeviceContext::now");
  if (device_.clock.log != nullptr) {
    throw RuntimeUsageError("DeviceContext::now on device " + std::to_string(device_.id) +
                            ": the launch prices its transfers after it ends (a congestion-aware "
                            "network or an external clock), so no clock is known while it runs; "
                            "read LaunchRecord::end_times or the trace");
  }
  return device_.clock.now;
}

void DeviceContext::advance(double seconds) {
  check_usable("DeviceContext::advance");
  check_amount(device_.id, "advance", seconds);
  DeviceClock& clock = device_.clock;
  if (!clock.on()) return;
  const double before = clock.now;
  clock.advance(device_.id, seconds);
  if (device_.trace.on()) device_.trace.instant(TraceKind::kCompute, "advance", before, clock.now);
}

void DeviceContext::compute(double flops, double bytes) {
  check_usable("DeviceContext::compute");
  check_amount(device_.id, "compute's flops", flops);
  check_amount(device_.id, "compute's bytes", bytes);
  DeviceClock& clock = device_.clock;
  if (!clock.on()) return;
  const DeviceSpec& spec = clock.time->device();
  double seconds = 0;
  for (auto [amount, rate, name] : {std::tuple{flops, spec.peak_flops, "peak_flops"},
                                    std::tuple{bytes, spec.memory_bandwidth, "memory_bandwidth"}}) {
    if (amount == 0) continue;
    if (!(rate > 0) || !std::isfinite(rate)) {
      InvalidArgumentError error(std::string("compute() needs the launch's DeviceSpec::") + name +
                                 " to be a finite number > 0 (it is " + std::to_string(rate) +
                                 ")");
      error.set_device(device_.id);
      throw error;
    }
    seconds = std::max(seconds, amount / rate);
  }
  const double before = clock.now;
  clock.advance(device_.id, seconds);
  if (device_.trace.on()) device_.trace.instant(TraceKind::kCompute, "compute", before, clock.now);
}

}  // namespace meshsim
