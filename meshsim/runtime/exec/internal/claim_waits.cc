#include "meshsim/runtime/exec/internal/claim_waits.h"

#include <algorithm>
#include <span>
#include <unordered_map>
#include <vector>

#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/internal/launch.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"

namespace meshsim {

ClaimWaits::Wait::Wait(ClaimWaits& waits, const DeviceState* claimant, const Launch& claiming,
                       const DeviceState& wanted)
    : waits_(waits) {
  std::lock_guard lock(waits_.mu_);
  entry_ = waits_.waits_.insert(waits_.waits_.end(), {claimant, &claiming, &wanted, 0, {}});
}

ClaimWaits::Wait::~Wait() {
  std::lock_guard lock(waits_.mu_);
  waits_.waits_.erase(entry_);
}

std::string ClaimWaits::Wait::give_up() {
  std::lock_guard lock(waits_.mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - waits_.last_search_ >= kSearchEvery) {
    waits_.last_search_ = now;
    waits_.search();
  }
  return entry_->cycle;
}

void ClaimWaits::search() {
  std::vector<Entry*> nodes;
  for (Entry& e : waits_) nodes.push_back(&e);
  const size_t n = nodes.size();
  // The waits each launch is or encloses the launch of. Launches are read
  // only along a wait's own chain, which lives as long as the wait; a holder
  // is only compared (one off every cycle may finish meanwhile).
  std::unordered_map<const Launch*, std::vector<size_t>> inside;
  for (size_t i = 0; i < n; ++i) {
    for (const Launch* l = nodes[i]->claiming; l != nullptr; l = l->enclosing()) {
      inside[l].push_back(i);
    }
  }
  std::vector<const Launch*> holder(n);
  std::vector<const std::vector<size_t>*> next(n, nullptr);  // the edges i -> j
  for (size_t i = 0; i < n; ++i) {
    holder[i] = nodes[i]->wanted->owner.load(std::memory_order_acquire);
    if (const auto found = inside.find(holder[i]); found != inside.end()) next[i] = &found->second;
  }
  const auto successors = [&](size_t i) {
    return next[i] != nullptr ? std::span<const size_t>(*next[i]) : std::span<const size_t>();
  };

  // Strongly connected sets (Tarjan's algorithm, without recursion).
  std::vector<int> order(n, -1), low(n, 0), set_of(n, -1);
  std::vector<bool> on_stack(n, false);
  std::vector<size_t> stack;
  std::vector<std::vector<size_t>> sets;
  int counter = 0;
  struct Frame {
    size_t node;
    size_t edge;
  };
  for (size_t root = 0; root < n; ++root) {
    if (order[root] >= 0) continue;
    std::vector<Frame> calls;
    const auto visit = [&](size_t v) {
      order[v] = low[v] = counter++;
      stack.push_back(v);
      on_stack[v] = true;
      calls.push_back({v, 0});
    };
    visit(root);
    while (!calls.empty()) {
      const size_t v = calls.back().node;
      const std::span<const size_t> out = successors(v);
      if (calls.back().edge < out.size()) {
        const size_t w = out[calls.back().edge++];
        if (order[w] < 0) {
          visit(w);
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], order[w]);
        }
        continue;
      }
      if (low[v] == order[v]) {
        std::vector<size_t>& set = sets.emplace_back();
        size_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          set_of[w] = static_cast<int>(sets.size() - 1);
          set.push_back(w);
        } while (w != v);
      }
      calls.pop_back();
      if (!calls.empty()) low[calls.back().node] = std::min(low[calls.back().node], low[v]);
    }
  }

  std::vector<bool> chosen(n, false);
  for (const std::vector<size_t>& set : sets) {
    const size_t first = set.front();
    const bool stuck = set.size() > 1 || std::ranges::count(successors(first), first) > 0;
    if (!stuck) continue;
    // The device body with the smallest agent id (then address: bodies of
    // several runtimes may share an agent id) gives up.
    const size_t* pick = nullptr;
    for (const size_t& i : set) {
      const DeviceState* c = nodes[i]->claimant;
      if (c == nullptr) continue;
      const DeviceState* best = pick != nullptr ? nodes[*pick]->claimant : nullptr;
      if (best == nullptr || c->agent < best->agent || (c->agent == best->agent && c < best)) {
        pick = &i;
      }
    }
    if (pick != nullptr) chosen[*pick] = true;
  }

  for (size_t v = 0; v < n; ++v) {
    Entry& e = *nodes[v];
    e.chosen = chosen[v] ? e.chosen + 1 : 0;
    if (e.chosen < 2 || !e.cycle.empty()) continue;
    // A cycle through v inside its set: breadth first back to v.
    std::vector<size_t> parent(n, n);
    std::vector<size_t> queue{v};
    size_t last = n;
    for (size_t q = 0; q < queue.size() && last == n; ++q) {
      for (const size_t w : successors(queue[q])) {
        if (w == v) {
          last = queue[q];
          break;
        }
        if (set_of[w] != set_of[v] || parent[w] != n) continue;
        parent[w] = queue[q];
        queue.push_back(w);
      }
    }
    if (last == n) continue;  // (a stuck set always leads back)
    std::vector<size_t> cycle;
    for (size_t u = last; u != v; u = parent[u]) cycle.push_back(u);
    cycle.push_back(v);
    std::reverse(cycle.begin(), cycle.end());
    // Each holder on it is, or encloses, the next wait's launch: alive.
    const RuntimeImpl& runtime = e.wanted->runtime;
    const auto describe = [&](const Launch* l) { return runtime.describe(l->mesh().mesh()); };
    for (const size_t u : cycle) {
      const Entry& w = *nodes[u];
      e.cycle += (e.cycle.empty() ? "" : "; ") +
                 (w.claimant != nullptr
                      ? w.claimant->name() + " (in the launch on " +
                            w.claimant->runtime.describe(w.claimant->launch->mesh().mesh()) + ")"
                      : "the launch on " + describe(w.claiming) + " from a host thread") +
                 " waits for " + w.wanted->name() + ", held by the launch on " +
                 describe(holder[u]);
    }
  }
}

}  // namespace meshsim
