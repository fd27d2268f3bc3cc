#include "meshsim/runtime/comm/internal/fabric.h"

#include <algorithm>
#include <bit>
#include <memory>

namespace meshsim {
namespace {

// The T in `slot`, installing a new one if the slot is empty (and counting it
// in `created`). A thread that loses the race deletes its copy and returns the
// winner's.
template <class T>
T* install_once(std::atomic<void*>& slot, std::atomic<size_t>& created) {
  void* current = slot.load(std::memory_order_acquire);
  if (current != nullptr) return static_cast<T*>(current);
  auto fresh = std::make_unique<T>();
  if (slot.compare_exchange_strong(current, fresh.get(), std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
    created.fetch_add(1, std::memory_order_relaxed);
    return fresh.release();
  }
  return static_cast<T*>(current);
}

}  // namespace

Fabric::Fabric(int devices, int cores) : devices_(devices), max_devices_(devices * cores) {
  const uint64_t n = static_cast<uint64_t>(std::max(1, max_devices_));
  const uint64_t max_key = (n * n - 1) * 2 + 1;
  levels_ = std::max(1, (static_cast<int>(std::bit_width(max_key)) + kBits - 1) / kBits);
}

Fabric::~Fabric() { destroy(&root_, levels_ - 1); }

std::string agent_name(int device, int core) {
  std::string out = "device " + std::to_string(device);
  if (core > 0) {
    out += " core ";
    out += std::to_string(core);
  }
  return out;
}

std::string Fabric::name(int agent) const {
  const int devices = std::max(1, devices_);
  return agent_name(agent % devices, agent / devices);
}

void Fabric::destroy(Node* node, int level) {
  for (auto& slot : node->child) {
    void* child = slot.load(std::memory_order_acquire);
    if (child == nullptr) continue;
    if (level == 0) {
      delete static_cast<Link*>(child);
    } else {
      destroy(static_cast<Node*>(child), level - 1);
      delete static_cast<Node*>(child);
    }
  }
}

Link& Fabric::link(int source, int destination, Lane lane) {
  const uint64_t key = (static_cast<uint64_t>(source) * static_cast<uint64_t>(max_devices_) +
                        static_cast<uint64_t>(destination)) *
                           2 +
                       static_cast<uint64_t>(lane);
  const auto digit = [key](int level) { return (key >> (level * kBits)) & (kFanout - 1); };
  Node* node = &root_;
  for (int level = levels_ - 1; level > 0; --level) {
    node = install_once<Node>(node->child[digit(level)], nodes_);
  }
  return *install_once<Link>(node->child[digit(0)], links_);
}

template <class Visit>
void Fabric::for_each_link(Visit visit) {
  // Depth first, children in digit order: keys come out in increasing order.
  const uint64_t n = static_cast<uint64_t>(max_devices_);
  const auto walk = [&](const auto& self, Node* node, int level, uint64_t prefix) -> void {
    for (int d = 0; d < kFanout; ++d) {
      void* child = node->child[d].load(std::memory_order_acquire);
      if (child == nullptr) continue;
      const uint64_t key = (prefix << kBits) | static_cast<uint64_t>(d);
      if (level == 0) {
        const uint64_t pair = key / 2;
        visit(static_cast<int>(pair / n), static_cast<int>(pair % n), static_cast<Lane>(key % 2),
              *static_cast<Link*>(child));
      } else {
        self(self, static_cast<Node*>(child), level - 1, key);
      }
    }
  };
  walk(walk, &root_, levels_ - 1, 0);
}

void Fabric::reset(const std::function<bool(int)>& involved) {
  for_each_link([&](int source, int destination, Lane, Link& link) {
    if (involved(source) || involved(destination)) link.reset();
  });
}

std::string Fabric::take_unreceived(const std::function<bool(int)>& involved) {
  std::string out;
  for_each_link([&](int source, int destination, Lane lane, Link& link) {
    // Links of other launches may be in use: look only at this one's.
    if (lane != Lane::kMessages || !involved(source) || !involved(destination)) return;
    if (link.pending() == 0) return;
    if (!out.empty()) out += "; ";
    out += std::to_string(link.pending()) + " from " + name(source) + " to " + name(destination);
    link.reset();
  });
  return out;
}

size_t Fabric::allocated_bytes() const {
  return nodes_.load(std::memory_order_relaxed) * sizeof(Node) +
         links_.load(std::memory_order_relaxed) * sizeof(Link);
}

}  // namespace meshsim
