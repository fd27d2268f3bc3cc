#pragma once
// A ring's steps as a script of transfers priced by a network model in a
// discrete-event loop: the independent reference for ring algorithms' times
// on congested networks (tests/runtime/time, tests/collectives).

#include <algorithm>
#include <cstdint>
#include <queue>
#include <vector>

#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

// Runs `steps` steps; in each, device i sends `bytes` to every offset in
// `offsets` (i + offset mod p), departing at its clock, and a device starts
// step k + 1 once it has received all its step-k messages, its clock the
// latest of their arrivals. Returns the time the last device finishes.
//
// Transfers are priced one at a time in canonical order by a discrete-event
// loop: the earliest pending transfer is priced next. That is safe because
// every latency is > 0: a transfer created later departs after an arrival,
// so after every transfer already pending. (Pricing each step as a set does
// not work once the clocks diverge: device 0's step k+1 can depart before
// device 5's step k.)
inline double run_steps(NetworkModel& model, int p, int steps, int64_t bytes, std::vector<int> offsets) {
  struct Pending {
    Transfer transfer;
    int step;
  };
  auto later = [](const Pending& a, const Pending& b) {
    return canonically_before(b.transfer, a.transfer);
  };
  std::priority_queue<Pending, std::vector<Pending>, decltype(later)> pending(later);
  const int fan = static_cast<int>(offsets.size());
  auto send_step = [&](int device, int step, double departure) {
    for (int k = 0; k < fan; ++k) {
      pending.push(
          {{device, (device + offsets[k]) % p, bytes, departure, int64_t{step} * fan + k}, step});
    }
  };
  std::vector<double> clock(p, 0.0);
  std::vector<std::vector<int>> received(p, std::vector<int>(steps, 0));
  for (int i = 0; i < p; ++i) send_step(i, 0, 0.0);
  while (!pending.empty()) {
    Pending next = pending.top();
    pending.pop();
    const int to = next.transfer.destination;
    clock[to] = std::max(clock[to], model.arrival(next.transfer));
    if (++received[to][next.step] == fan && next.step + 1 < steps) {
      send_step(to, next.step + 1, clock[to]);
    }
  }
  return *std::max_element(clock.begin(), clock.end());
}

}  // namespace meshsim
