#include "meshsim/runtime/time/virtual_time.h"

#include <algorithm>

namespace meshsim {

VirtualTime virtual_time_on(std::shared_ptr<NetworkModel> network, const AbstractMesh& mesh,
                            const TopologyMapping& mapping, DeviceSpec device) {
  VirtualTime time{std::move(network), std::vector<int>(mesh.size()), device};
  for (int position = 0; position < mesh.size(); ++position) {
    time.nodes[position] = mapping.node(position);
  }
  return time;
}

double LaunchRecord::makespan() const {
  return end_times.empty() ? 0.0 : *std::max_element(end_times.begin(), end_times.end());
}

}  // namespace meshsim
