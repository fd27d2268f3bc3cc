#pragma once
// The node check of the models over a topology (NetworkModel::check).

#include "meshsim/mesh/topology/topology.h"
#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

// InvalidArgumentError naming the transfer unless both nodes are in
// [0, topology.num_nodes()).
void check_nodes(const Transfer& transfer, const Topology& topology);

}  // namespace meshsim
