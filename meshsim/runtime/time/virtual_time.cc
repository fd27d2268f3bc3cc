#include "meshsim/runtime/time/virtual_time.h"

namespace meshsim {

VirtualTime virtual_time_on(std::shared_ptr<NetworkModel> network, const AbstractMesh& mesh,
                            const TopologyMapping& mapping, DeviceSpec device) {
  VirtualTime time;
  time.network = std::move(network);
  time.nodes.resize(mesh.size());
  time.device = device;
  for (int position = 0; position < mesh.size(); ++position) {
    time.nodes[position] = mapping.node(position);
  }
  return time;
}

}  // namespace meshsim
