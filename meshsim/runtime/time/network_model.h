#pragma once
// NetworkModel: prices a transfer in virtual time. Given a message from one
// topology node to another, its size and the time it departs, a model says
// when it arrives. Models are pure computation over a Topology: no threads,
// no clocks of their own. Device ids are not nodes: translate runtime device
// ids with Mesh::position_of and TopologyMapping::node first.
//
// Units: bytes; seconds of virtual time (doubles).
//
// Canonical order. A model with state (congestion) must give results that do
// not depend on the host's thread scheduling, so transfers are priced in one
// order fixed by the program: increasing (departure, source, destination,
// sequence). `sequence` is whatever makes the key unique and is fixed by the
// program, e.g. the transfer's index among the messages from source to
// destination since the launch began (a link's message counter).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace meshsim {

struct Transfer {
  int source;          // topology node
  int destination;     // topology node
  std::int64_t bytes;  // >= 0
  double departure;    // seconds of virtual time, finite and >= 0
  std::int64_t sequence = 0;
};

// True if `a` comes before `b` in canonical order.
bool canonically_before(const Transfer& a, const Transfer& b);

// "transfer 0 -> 3 (1024 bytes, departing at 0.5 s, sequence 0)", for messages.
std::string describe(const Transfer& transfer);

class NetworkModel {
 public:
  virtual ~NetworkModel() = default;

  // When `transfer` arrives at its destination (>= its departure). Throws
  // what check() throws; each model states what more it requires (order,
  // thread-safety).
  virtual double arrival(const Transfer& transfer) = 0;

  // Throws InvalidArgumentError naming the transfer if no model of this kind
  // could price it: negative bytes, a departure that is not finite and >= 0,
  // and (models over a topology) a node out of the topology's range. An
  // integration may call it when a transfer is issued, before pricing.
  virtual void check(const Transfer& transfer) const;

  // Whether arrival() must be called in canonical order (a model with
  // congestion state). Devices of a launch price as they go, in no fixed
  // order, so a launch with such a model prices after it ends, in order of
  // virtual time (virtual_time.h).
  virtual bool needs_canonical_order() const { return false; }

  // Forgets the state of earlier transfers (per-launch congestion), so the
  // next transfer sees an idle network.
  virtual void reset() = 0;

  // The arrival of each transfer, in the order given. The transfers are
  // priced by arrival() in canonical order (ties in the key broken by bytes),
  // so the result is a function of the set, whatever order it is listed in.
  // Checks every transfer (check()) before pricing any.
  // A model that requires canonical order across calls (congestion-aware)
  // throws if the set starts before what it priced last; it may have booked
  // part of the set by then, so reset() it before pricing more.
  std::vector<double> arrivals(std::span<const Transfer> transfers);
};

}  // namespace meshsim
