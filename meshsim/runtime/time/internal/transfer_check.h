#pragma once
// The checks of transfers and of the arrivals models price for them: the
// nodes of a model over a topology (NetworkModel::check), and every arrival
// a launch or a CallbackModel takes from a model it does not control.

#include <string_view>

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

// `time`, what `who` returned as the arrival of `transfer`, if it is finite
// and not before the departure; else InvalidArgumentError naming both: a
// model's NaN, infinity or time travel must not become a device's clock.
double checked_arrival(double time, const Transfer& transfer, std::string_view who);

}  // namespace meshsim
