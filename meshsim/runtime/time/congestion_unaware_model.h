#pragma once
// CongestionUnawareModel: every message has the network to itself. A message
// from `source` to `destination` over route links l1..lh arrives at
//
//   departure + (latency(l1) + ... + latency(lh)) + bytes / min_i bandwidth(li)
//
// i.e. hops x latency + bytes / bandwidth when the links are alike: the
// latencies add up, the bytes stream through the route at the speed of its
// slowest link (pipelined, cut-through). A message to itself arrives at its
// departure. (The congestion-aware model is store-and-forward instead, so on
// a route of several hops the two differ even without contention.)

#include "meshsim/mesh/topology/topology.h"
#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

class CongestionUnawareModel final : public NetworkModel {
 public:
  explicit CongestionUnawareModel(Topology topology) : topology_(std::move(topology)) {}

  const Topology& topology() const { return topology_; }

  // Stateless: any order gives the same answers, and it is safe to call from
  // several threads at once. Errors as NetworkModel::arrival.
  double arrival(const Transfer& transfer) override;
  void check(const Transfer& transfer) const override;
  // Nothing to forget.
  void reset() override {}

 private:
  Topology topology_;
};

}  // namespace meshsim
