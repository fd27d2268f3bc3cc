#include "meshsim/runtime/comm/internal/channel.h"

#include <algorithm>
#include <bit>
#include <utility>

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

void Channel::send(Waiter& waiter, Array message) {
  // Only this thread advances sent_, so a relaxed load of it is current.
  const uint32_t sent = count(sent_.load(std::memory_order_relaxed));
  waiter.wait(received_,
              [sent](uint32_t value) { return distance(sent, count(value)) < kCapacity; });
  slots_[sent % kCapacity] = std::move(message);
  sent_.advance();
}

Array Channel::receive(Waiter& waiter) {
  const uint32_t received = count(received_.load(std::memory_order_relaxed));
  waiter.wait(sent_, [received](uint32_t value) { return count(value) != received; });
  // Moving out leaves the slot without storage, so the sender's array is
  // unshared again as soon as the receiver drops its copy.
  Array message = std::move(slots_[received % kCapacity]);
  received_.advance();
  return message;
}

void Channel::reset() {
  sent_.clear_poison();
  received_.clear_poison();
  for (Array& slot : slots_) slot = Array();
  received_.advance(distance(count(sent_.load()), count(received_.load())));
}

GroupChannels::GroupChannels(int size, std::atomic<bool>* used) : size_(size), used_(used) {
  const uint64_t max_key = static_cast<uint64_t>(size) * static_cast<uint64_t>(size) - 1;
  levels_ = std::max(1, (static_cast<int>(std::bit_width(max_key)) + kBits - 1) / kBits);
}

GroupChannels::~GroupChannels() { destroy(&root_, levels_ - 1); }

void GroupChannels::destroy(Node* node, int level) {
  for (auto& slot : node->child) {
    void* child = slot.load(std::memory_order_acquire);
    if (child == nullptr) continue;
    if (level == 0) {
      delete static_cast<Channel*>(child);
    } else {
      destroy(static_cast<Node*>(child), level - 1);
      delete static_cast<Node*>(child);
    }
  }
}

Channel& GroupChannels::between(int sender, int receiver) {
  const uint64_t key = static_cast<uint64_t>(sender) * static_cast<uint64_t>(size_) +
                       static_cast<uint64_t>(receiver);
  const auto digit = [key](int level) { return (key >> (level * kBits)) & (kFanout - 1); };
  Node* node = &root_;
  for (int level = levels_ - 1; level > 0; --level) {
    node = install_once<Node>(node->child[digit(level)], nodes_);
  }
  std::atomic<void*>& slot = node->child[digit(0)];
  if (void* channel = slot.load(std::memory_order_acquire)) return *static_cast<Channel*>(channel);
  used_->store(true, std::memory_order_relaxed);
  return *install_once<Channel>(slot, channels_);
}

template <class Visit>
void GroupChannels::for_each_channel(Visit visit) {
  // Depth first, children in digit order: keys come out in increasing order.
  const auto walk = [&](const auto& self, Node* node, int level, uint64_t prefix) -> void {
    for (int d = 0; d < kFanout; ++d) {
      void* child = node->child[d].load(std::memory_order_acquire);
      if (child == nullptr) continue;
      const uint64_t key = (prefix << kBits) | static_cast<uint64_t>(d);
      if (level == 0) {
        visit(key, *static_cast<Channel*>(child));
      } else {
        self(self, static_cast<Node*>(child), level - 1, key);
      }
    }
  };
  walk(walk, &root_, levels_ - 1, 0);
}

void GroupChannels::reset() {
  for_each_channel([](uint64_t, Channel& channel) { channel.reset(); });
}

size_t GroupChannels::allocated_bytes() const {
  return nodes_.load(std::memory_order_relaxed) * sizeof(Node) +
         channels_.load(std::memory_order_relaxed) * sizeof(Channel);
}

std::string GroupChannels::take_unreceived(std::span<const int> device_ids) {
  std::string out;
  for_each_channel([&](uint64_t key, Channel& channel) {
    if (channel.pending() == 0) return;
    const uint64_t n = static_cast<uint64_t>(size_);
    if (!out.empty()) out += "; ";
    out += std::to_string(channel.pending()) + " from device " +
           std::to_string(device_ids[key / n]) + " to device " +
           std::to_string(device_ids[key % n]);
    channel.reset();
  });
  return out;
}

}  // namespace meshsim
