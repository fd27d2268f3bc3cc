#include "meshsim/runtime/exec/internal/claim_waits.h"

#include <algorithm>

#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/internal/launch.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"

namespace meshsim {
namespace {

// Whether `device`'s body runs in `launch` or in a launch nested in it.
// Reads only `device`'s own chain, which is alive while the body runs.
bool runs_in(const DeviceState& device, const Launch* launch) {
  for (const Launch* l = device.launch; l != nullptr; l = l->enclosing()) {
    if (l == launch) return true;
  }
  return false;
}

}  // namespace

ClaimWaits::Wait::Wait(ClaimWaits& waits, const DeviceState& claimant, const DeviceState& wanted)
    : waits_(waits), claimant_(&claimant) {
  std::lock_guard lock(waits_.mu_);
  waits_.waits_.push_back({&claimant, &wanted});
}

ClaimWaits::Wait::~Wait() {
  std::lock_guard lock(waits_.mu_);
  std::erase_if(waits_.waits_, [&](const Entry& e) { return e.claimant == claimant_; });
}

std::string ClaimWaits::cycle_to_break(const DeviceState& claimant) const {
  std::lock_guard lock(mu_);
  const auto mine = std::ranges::find(waits_, &claimant, &Entry::claimant);
  if (mine == waits_.end()) return "";
  // The launches the claimant's wait waits for, breadth first: each with the
  // wait that reached it and the launch that wait came from. The launches
  // are compared, never read: one that is not on a cycle may finish.
  struct Reached {
    const Launch* launch;
    size_t by;      // index into waits_
    size_t parent;  // index into reached
  };
  std::vector<Reached> reached;
  if (const Launch* holder = mine->wanted->owner.load(std::memory_order_acquire)) {
    reached.push_back({holder, static_cast<size_t>(mine - waits_.begin()), 0});
  }
  for (size_t i = 0; i < reached.size(); ++i) {
    if (runs_in(claimant, reached[i].launch)) {
      // A cycle: the waits from the claimant's own one on. Each holder on it
      // encloses the next waiting body (or the claimant's), so it is alive.
      std::vector<const Reached*> cycle;
      for (size_t j = i;; j = reached[j].parent) {
        cycle.push_back(&reached[j]);
        if (j == 0) break;
      }
      std::reverse(cycle.begin(), cycle.end());
      const auto agent = [&](const Reached* r) { return waits_[r->by].claimant->agent; };
      if (std::ranges::min(cycle, {}, agent) != cycle.front()) return "";  // another gives up
      const auto describe = [&](const Launch* l) {
        return claimant.runtime.describe(l->mesh().mesh());
      };
      std::string out;
      for (const Reached* r : cycle) {
        const Entry& e = waits_[r->by];
        out += (out.empty() ? "" : "; ") + e.claimant->name() + " (in the launch on " +
               describe(e.claimant->launch) + ") waits for " + e.wanted->name() +
               ", held by the launch on " + describe(r->launch);
      }
      return out;
    }
    for (size_t e = 0; e < waits_.size(); ++e) {
      if (!runs_in(*waits_[e].claimant, reached[i].launch)) continue;
      const Launch* next = waits_[e].wanted->owner.load(std::memory_order_acquire);
      if (next == nullptr || std::ranges::find(reached, next, &Reached::launch) != reached.end()) {
        continue;
      }
      reached.push_back({next, e, i});
    }
  }
  return "";
}

}  // namespace meshsim
