#include "meshsim/runtime/exec/internal/claim_waits.h"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <vector>

#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/internal/launch.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"

namespace meshsim {

namespace {

// "the launch on Mesh(...)", described by the runtime it runs on.
std::string launch_on(const Launch& launch) {
  return "the launch on " + launch.runtime().describe(launch.mesh().mesh());
}

// "device 3", or "device 3 of another runtime" when it is not of `home`'s.
std::string device_name(const DeviceState& device, const RuntimeImpl& home) {
  return device.name() + (&device.runtime == &home ? "" : " of another runtime");
}

}  // namespace

ClaimWaits& ClaimWaits::process() {
  static ClaimWaits* const waits = new ClaimWaits;
  return *waits;
}

ClaimWaits::Wait::Wait(const DeviceState* claimant, const Launch& claiming,
                       const DeviceState& wanted)
    : waits_(process()) {
  std::lock_guard lock(waits_.mu_);
  entry_ = waits_.waits_.insert(waits_.waits_.end(),
                                {claimant, &claiming, &wanted, nullptr, 0, {}});
}

ClaimWaits::Wait::Wait(const DeviceState& claimant, const RuntimeImpl& destroying)
    : waits_(process()) {
  std::lock_guard lock(waits_.mu_);
  entry_ = waits_.waits_.insert(waits_.waits_.end(),
                                {&claimant, claimant.launch, nullptr, &destroying, 0, {}});
}

ClaimWaits::Wait::~Wait() {
  std::lock_guard lock(waits_.mu_);
  waits_.waits_.erase(entry_);
}

std::string ClaimWaits::Wait::give_up() {
  std::lock_guard lock(waits_.mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now - waits_.last_search_ >= kSearchEvery) {
    waits_.search();
    // From its end: searches never follow each other back to back.
    waits_.last_search_ = std::chrono::steady_clock::now();
  }
  return entry_->cycle;
}

void ClaimWaits::search() {
  std::vector<Entry*> waits;
  for (Entry& e : waits_) waits.push_back(&e);
  const size_t n = waits.size();
  // Nodes: the waits (0 .. n-1), then the launches on their chains. A wait
  // leads to the launch holding its device (a destructor's wait: to each
  // launch of the runtime it destroys); a launch to the waits whose launch
  // it is or encloses. Launches are read only along a wait's own chain,
  // which lives as long as the wait; a holder is only compared.
  std::vector<std::vector<size_t>> out(n);
  std::unordered_map<const Launch*, size_t> launch_node;
  for (size_t i = 0; i < n; ++i) {
    for (const Launch* l = waits[i]->claiming; l != nullptr; l = l->enclosing()) {
      const auto [node, fresh] = launch_node.try_emplace(l, out.size());
      if (fresh) out.emplace_back();
      out[node->second].push_back(i);
    }
  }
  std::vector<const Launch*> holder(n);
  for (size_t i = 0; i < n; ++i) {
    if (const RuntimeImpl* destroyed = waits[i]->destroying) {
      for (const auto& [launch, node] : launch_node) {
        if (&launch->runtime() == destroyed) out[i].push_back(node);
      }
      continue;
    }
    holder[i] = waits[i]->wanted->owner.load(std::memory_order_acquire);
    // Its own launch holds it: the claim succeeded, and the wait is leaving.
    if (holder[i] == waits[i]->claiming) continue;
    if (const auto found = launch_node.find(holder[i]); found != launch_node.end()) {
      out[i].push_back(found->second);
    }
  }
  const size_t nodes = out.size();

  // Strongly connected sets (Tarjan's algorithm, without recursion). In this
  // graph every set of more than one node holds a cycle of waits.
  std::vector<int> order(nodes, -1), low(nodes, 0), set_of(nodes, -1);
  std::vector<bool> on_stack(nodes, false);
  std::vector<size_t> stack;
  std::vector<std::vector<size_t>> sets;
  int counter = 0;
  struct Frame {
    size_t node;
    size_t edge;
  };
  std::vector<Frame> calls;
  const auto visit = [&](size_t v) {
    order[v] = low[v] = counter++;
    stack.push_back(v);
    on_stack[v] = true;
    calls.push_back({v, 0});
  };
  for (size_t root = 0; root < nodes; ++root) {
    if (order[root] >= 0) continue;
    visit(root);
    while (!calls.empty()) {
      const size_t v = calls.back().node;
      if (calls.back().edge < out[v].size()) {
        const size_t w = out[v][calls.back().edge++];
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
    if (set.size() < 2) continue;
    // The device body with the smallest agent id (then address) gives up.
    const DeviceState* best = nullptr;
    size_t pick = n;
    for (const size_t i : set) {
      // Host threads and destructors cannot give up.
      if (i >= n || waits[i]->destroying != nullptr) continue;
      const DeviceState* c = waits[i]->claimant;
      if (c == nullptr) continue;
      if (best == nullptr || c->agent < best->agent ||
          (c->agent == best->agent && std::less<>()(c, best))) {
        best = c;
        pick = i;
      }
    }
    if (pick < n) chosen[pick] = true;
  }

  for (size_t v = 0; v < n; ++v) {
    Entry& e = *waits[v];
    e.chosen = chosen[v] ? e.chosen + 1 : 0;
    if (e.chosen == 0) e.cycle.clear();  // a cycle it was told of is gone
    if (e.chosen < 2 || !e.cycle.empty()) continue;
    // A cycle through v inside its set: breadth first back to v.
    std::vector<size_t> parent(nodes, nodes);
    std::vector<size_t> queue{v};
    size_t last = nodes;
    for (size_t q = 0; q < queue.size() && last == nodes; ++q) {
      for (const size_t w : out[queue[q]]) {
        if (w == v) {
          last = queue[q];
          break;
        }
        if (set_of[w] != set_of[v] || parent[w] != nodes) continue;
        parent[w] = queue[q];
        queue.push_back(w);
      }
    }
    if (last == nodes) continue;  // (a stuck set always leads back)
    std::vector<size_t> cycle;  // its waits, from v on
    for (size_t u = last; u != v; u = parent[u]) {
      if (u < n) cycle.push_back(u);
    }
    cycle.push_back(v);
    std::reverse(cycle.begin(), cycle.end());
    // Each holder on it is a launch node of the set: on a live wait's
    // chain. Devices are named as seen from the body that gives up.
    const RuntimeImpl& home = e.claimant->runtime;
    for (size_t k = 0; k < cycle.size(); ++k) {
      const size_t u = cycle[k];
      const Entry& w = *waits[u];
      if (w.destroying != nullptr) {
        // The launch it leads to on the cycle: of the destroyed runtime, on
        // the next wait's chain.
        const Launch* on = waits[cycle[(k + 1) % cycle.size()]]->claiming;
        while (&on->runtime() != w.destroying) on = on->enclosing();
        e.cycle += (e.cycle.empty() ? "" : "; ") + device_name(*w.claimant, home) + " (in " +
                   launch_on(*w.claiming) + ") waits in the destructor of " +
                   (w.destroying == &home ? "this runtime" : "another runtime") + " for " +
                   launch_on(*on) + " to end";
        continue;
      }
      e.cycle += (e.cycle.empty() ? "" : "; ") +
                 (w.claimant != nullptr
                      ? device_name(*w.claimant, home) + " (in " + launch_on(*w.claimant->launch) +
                            ")"
                      : launch_on(*w.claiming) + " from a host thread") +
                 " waits for " + device_name(*w.wanted, home) + ", held by " +
                 launch_on(*holder[u]);
    }
  }
}

size_t ClaimWaits::size() {
  std::lock_guard lock(mu_);
  return waits_.size();
}

}  // namespace meshsim
