#pragma once
// Virtual time on a fully connected topology whose closed forms the tests
// compute by hand: every pair of nodes one hop apart, kAlpha seconds per
// message and kBeta seconds per byte.

#include <memory>

#include "meshsim/mesh/topology/topology.h"
#include "meshsim/runtime/time/congestion_aware_model.h"
#include "meshsim/runtime/time/congestion_unaware_model.h"
#include "meshsim/runtime/time/virtual_time.h"

namespace meshsim::fully_connected_time {

constexpr double kAlpha = 0.25;         // seconds per message
constexpr double kBandwidth = 1 << 10;  // bytes per second
constexpr double kBeta = 1 / kBandwidth;

// On `nodes` nodes, priced as transfers happen (congestion-unaware) or after
// the launch (congestion-aware), with `device` as the device spec.
inline std::shared_ptr<VirtualTime> fully_connected(int nodes, bool congestion_aware = false,
                                                    DeviceSpec device = {}) {
  auto time = std::make_shared<VirtualTime>();
  const Topology topology({{DimensionKind::fully_connected, nodes, kBandwidth, kAlpha}});
  if (congestion_aware) {
    time->network = std::make_shared<CongestionAwareModel>(topology);
  } else {
    time->network = std::make_shared<CongestionUnawareModel>(topology);
  }
  time->device = device;
  return time;
}

}  // namespace meshsim::fully_connected_time
