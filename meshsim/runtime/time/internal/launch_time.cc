#include "meshsim/runtime/time/internal/launch_time.h"

#include <string>

#include "meshsim/mesh/error.h"

namespace meshsim {

LaunchTime::LaunchTime(const VirtualTime& config, const Mesh& mesh, int device_limit)
    : network_(config.network), node_of_device_(device_limit, -1), device_(config.device) {
  const std::string where = "virtual time of the launch on " + mesh.to_string();
  if (network_ == nullptr) throw InvalidArgumentError(where + ": no network model");
  if (network_->needs_canonical_order()) {
    throw InvalidArgumentError(where + ": the network model needs transfers in canonical order "
                               "(congestion-aware), which a launch cannot give it; use a "
                               "congestion-unaware or callback model");
  }
  const int size = mesh.size();
  if (!config.nodes.empty() && static_cast<int>(config.nodes.size()) != size) {
    throw InvalidArgumentError(where + ": " + std::to_string(config.nodes.size()) +
                               " topology nodes for " + std::to_string(size) + " mesh positions");
  }
  for (int position = 0; position < size; ++position) {
    const int node = config.nodes.empty() ? position : config.nodes[position];
    try {
      network_->check(Transfer{node, node, 0, 0.0});
    } catch (const Error& e) {
      throw InvalidArgumentError(where + ": mesh position " + std::to_string(position) +
                                 " is placed on node " + std::to_string(node) + ": " + e.what());
    }
    node_of_device_[mesh.device_ids()[position]] = node;
  }
}

double LaunchTime::arrival(int source, int destination, int64_t bytes, double departure) const {
  return network_->arrival(
      Transfer{node_of_device_[source], node_of_device_[destination], bytes, departure});
}

}  // namespace meshsim
