#pragma once
// CongestionAwareModel: links are shared. A message crosses its route
// store-and-forward: on each link in turn it waits until it has reached the
// link and the link is free, occupies the link for bytes / bandwidth, then
// pays the link's latency before it reaches the next link (or arrives). With
// the network to itself, a message over links l1..lh arrives at
//
//   departure + sum_i (bytes / bandwidth(li) + latency(li)),
//
// and two messages sharing a link pass it one after the other: two equal
// flows over one link take twice as long as one.
//
// Determinism. TopologyLink time is granted in canonical order (network_model.h):
// a transfer books each link of its route at the earliest time it is there
// and the link is free of the bookings of every transfer before it in
// canonical order (a gap before a later booking is used if the message fits
// in it whole: it would otherwise be idle link time). So a message never
// delays one that precedes it in canonical order, and the arrivals are a
// function of the SET of transfers priced since reset(), not of the order of
// the calls: give the model the set (NetworkModel::arrivals), or call
// arrival() in canonical order. When departures depend on arrivals (a device
// sends after it received), price from a discrete-event loop: keep the
// transfers issued but not priced in a queue, and price the canonically
// first one only when no device can still issue one before it. With every
// latency > 0 that holds for the first pending transfer once every device
// has issued what it can (a later transfer departs after some arrival);
// tests/support/ring_step_schedule.h has such a loop, and a launch runs one
// (runtime/time/internal/deferred_clocks.h).
// Pricing step by step is not enough once the clocks diverge: one device's
// step k+1 may depart before another's step k.
// A call that departs before one priced earlier would make the result depend
// on the order of the calls, so it throws instead (see arrival()). Calls at
// one departure in another order are booked in the order of the calls: a
// causal replay (a launch's, deferred_clocks.h) needs that for a transfer
// that departs at the very arrival of one it follows (a zero-cost route).
//
// Thread-safety: none. The model is one mutable state; the caller
// serializes every call (one model per launch, or a lock).

#include <memory>

#include "meshsim/mesh/topology/topology.h"
#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

class CongestionAwareModel final : public NetworkModel {
 public:
  explicit CongestionAwareModel(Topology topology);
  ~CongestionAwareModel() override;

  const Topology& topology() const { return topology_; }

  // Books the transfer's route and returns its arrival. Throws
  // InvalidArgumentError (naming both transfers) if the transfer departs
  // before the last one priced since reset(), and as NetworkModel::arrival;
  // a rejected transfer books nothing.
  double arrival(const Transfer& transfer) override;
  bool needs_canonical_order() const override { return true; }
  void check(const Transfer& transfer) const override;
  // Frees every link and forgets the canonical position.
  void reset() override;

 private:
  struct State;  // the link bookings, kept out of the installed header

  Topology topology_;
  std::unique_ptr<State> state_;
};

}  // namespace meshsim
