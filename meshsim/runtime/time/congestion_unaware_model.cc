#include "meshsim/runtime/time/congestion_unaware_model.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "meshsim/runtime/time/internal/transfer_check.h"

namespace meshsim {

void CongestionUnawareModel::check(const Transfer& transfer) const {
  NetworkModel::check(transfer);
  check_nodes(transfer, topology_);
}

double CongestionUnawareModel::arrival(const Transfer& transfer) {
  check(transfer);
  // One route buffer per thread: no allocation per transfer, no shared state.
  thread_local std::vector<TopologyLink> route;
  topology_.route(transfer.source, transfer.destination, route);
  if (route.empty()) return transfer.departure;
  double latency = 0;
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const TopologyLink& link : route) {
    latency += link.latency;
    bandwidth = std::min(bandwidth, link.bandwidth);
  }
  return finite_arrival(
      transfer.departure + latency + static_cast<double>(transfer.bytes) / bandwidth, transfer,
      "congestion-unaware model", topology_);
}

}  // namespace meshsim
