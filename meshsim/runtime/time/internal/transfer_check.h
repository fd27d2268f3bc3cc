#pragma once
// The checks of the models over a topology: their nodes (NetworkModel::check)
// and their arrivals.

#include "meshsim/mesh/topology/topology.h"
#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

// InvalidArgumentError naming the transfer unless both nodes are in
// [0, topology.num_nodes()).
void check_nodes(const Transfer& transfer, const Topology& topology);

// `time`, the arrival `model` priced for `transfer`, if finite; else
// InvalidArgumentError naming both and the topology (a bandwidth so small or
// a latency so large that the time overflows).
double finite_arrival(double time, const Transfer& transfer, const char* model,
                      const Topology& topology);

}  // namespace meshsim
