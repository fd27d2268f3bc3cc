#include "meshsim/runtime/time/network_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/time/internal/seconds_text.h"
#include "meshsim/runtime/time/internal/transfer_check.h"

namespace meshsim {

bool canonically_before(const Transfer& a, const Transfer& b) {
  return std::tie(a.departure, a.source, a.destination, a.sequence) <
         std::tie(b.departure, b.source, b.destination, b.sequence);
}

std::string describe(const Transfer& transfer) {
  return "transfer " + std::to_string(transfer.source) + " -> " +
         std::to_string(transfer.destination) + " (" + std::to_string(transfer.bytes) +
         " bytes, departing at " + seconds_text(transfer.departure) + " s, sequence " +
         std::to_string(transfer.sequence) + ")";
}

void NetworkModel::check(const Transfer& transfer) const {
  if (transfer.bytes < 0) {
    throw InvalidArgumentError(describe(transfer) + ": bytes must be >= 0");
  }
  if (!std::isfinite(transfer.departure) || transfer.departure < 0) {
    throw InvalidArgumentError(describe(transfer) + ": departure must be a finite time >= 0");
  }
}

void check_nodes(const Transfer& transfer, const Topology& topology) {
  for (auto [role, node] :
       {std::pair{"source", transfer.source}, std::pair{"destination", transfer.destination}}) {
    if (node < 0 || node >= topology.num_nodes()) {
      throw InvalidArgumentError(describe(transfer) + ": " + role + " node " +
                                 std::to_string(node) + " is out of range [0, " +
                                 std::to_string(topology.num_nodes()) + ") of topology " +
                                 topology.to_string());
    }
  }
}

double finite_arrival(double time, const Transfer& transfer, const char* model,
                      const Topology& topology) {
  if (std::isfinite(time)) return time;
  throw InvalidArgumentError(std::string(model) + ": " + describe(transfer) + " arrives at " +
                             seconds_text(time) + " s on topology " + topology.to_string() +
                             ": a bandwidth or latency out of any useful range");
}

double checked_arrival(double time, const Transfer& transfer, std::string_view who) {
  if (std::isfinite(time) && time >= transfer.departure) return time;
  throw InvalidArgumentError(std::string(who) + " returned " + seconds_text(time) + " for " +
                             describe(transfer) + "; expected a finite time >= the departure");
}

std::vector<double> NetworkModel::arrivals(std::span<const Transfer> transfers) {
  for (const Transfer& transfer : transfers) check(transfer);
  std::vector<size_t> order(transfers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t i, size_t j) {
    const Transfer& a = transfers[i];
    const Transfer& b = transfers[j];
    if (canonically_before(a, b)) return true;
    if (canonically_before(b, a)) return false;
    return a.bytes < b.bytes;  // equal transfers are interchangeable
  });
  std::vector<double> out(transfers.size());
  for (size_t i : order) out[i] = arrival(transfers[i]);
  return out;
}

}  // namespace meshsim
