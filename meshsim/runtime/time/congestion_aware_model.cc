#include "meshsim/runtime/time/congestion_aware_model.h"

#include <cmath>
#include <optional>
#include <unordered_map>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/time/internal/link_schedule.h"
#include "meshsim/runtime/time/internal/transfer_check.h"

namespace meshsim {

struct CongestionAwareModel::State {
  std::unordered_map<LinkId, LinkSchedule> links;  // only the links used since reset()
  std::optional<Transfer> last;                    // the last transfer priced
  std::vector<TopologyLink> route;                         // reused buffer
};

CongestionAwareModel::CongestionAwareModel(Topology topology)
    : topology_(std::move(topology)), state_(std::make_unique<State>()) {}

CongestionAwareModel::~CongestionAwareModel() = default;

void CongestionAwareModel::check(const Transfer& transfer) const {
  NetworkModel::check(transfer);
  check_nodes(transfer, topology_);
}

double CongestionAwareModel::arrival(const Transfer& transfer) {
  check(transfer);
  if (state_->last && transfer.departure < state_->last->departure) {
    throw InvalidArgumentError(
        "congestion-aware model: " + describe(transfer) + " departs before " +
        describe(*state_->last) +
        ", priced earlier; price transfers in canonical order (departure, source, destination, "
        "sequence) or together with arrivals()");
  }
  topology_.route(transfer.source, transfer.destination, state_->route);
  state_->last = transfer;
  double time = transfer.departure;
  const double bytes = static_cast<double>(transfer.bytes);
  for (const TopologyLink& link : state_->route) {
    const double occupancy = bytes / link.bandwidth;
    LinkSchedule& schedule = state_->links[link.id];
    // Departures never decrease, so no later transfer reaches a link before
    // this one's departure: older bookings can never matter again.
    schedule.forget_before(transfer.departure);
    time = schedule.book(time, occupancy) + occupancy + link.latency;
  }
  // A time that overflowed was booked on its links: forget every booking,
  // so a caller that catches the error does not price against it.
  if (!std::isfinite(time)) reset();
  return finite_arrival(time, transfer, "congestion-aware model", topology_);
}

void CongestionAwareModel::reset() {
  state_->links.clear();
  state_->last.reset();
}

}  // namespace meshsim
