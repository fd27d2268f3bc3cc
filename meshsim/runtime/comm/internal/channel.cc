#include "meshsim/runtime/comm/internal/channel.h"

#include <utility>

namespace meshsim {
namespace {

// The object in `slot`, installing the one make() builds (a unique_ptr) if the
// slot is empty. A thread that loses the race lets its unique_ptr delete its
// copy and returns the winner's.
template <class T, class Make>
T* install_once(std::atomic<T*>& slot, Make make) {
  T* current = slot.load(std::memory_order_acquire);
  if (current != nullptr) return current;
  auto fresh = make();
  if (slot.compare_exchange_strong(current, fresh.get(), std::memory_order_acq_rel,
                                   std::memory_order_acquire)) {
    return fresh.release();
  }
  return current;
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

GroupChannels::GroupChannels(int size, std::atomic<bool>* used)
    : size_(size), used_(used), rows_(new std::atomic<Row*>[size]()) {}

GroupChannels::~GroupChannels() {
  for (int sender = 0; sender < size_; ++sender) {
    Row* row = rows_[sender].load(std::memory_order_acquire);
    if (row == nullptr) continue;
    for (int receiver = 0; receiver < size_; ++receiver) delete row[receiver].load();
    delete[] row;
  }
}

Channel& GroupChannels::between(int sender, int receiver) {
  Row* row =
      install_once(rows_[sender], [this] { return std::unique_ptr<Row[]>(new Row[size_]()); });
  return *install_once(row[receiver], [this] {
    used_->store(true, std::memory_order_relaxed);
    return std::make_unique<Channel>();
  });
}

void GroupChannels::reset() {
  for (int sender = 0; sender < size_; ++sender) {
    Row* row = rows_[sender].load(std::memory_order_acquire);
    if (row == nullptr) continue;
    for (int receiver = 0; receiver < size_; ++receiver) {
      if (Channel* channel = row[receiver].load(std::memory_order_acquire)) channel->reset();
    }
  }
}

}  // namespace meshsim

namespace meshsim {

std::string GroupChannels::take_unreceived(std::span<const int> device_ids) {
  std::string out;
  for (int sender = 0; sender < size_; ++sender) {
    Row* row = rows_[sender].load(std::memory_order_acquire);
    if (row == nullptr) continue;
    for (int receiver = 0; receiver < size_; ++receiver) {
      Channel* channel = row[receiver].load(std::memory_order_acquire);
      if (channel == nullptr || channel->pending() == 0) continue;
      if (!out.empty()) out += "; ";
      out += std::to_string(channel->pending()) + " from device " +
             std::to_string(device_ids[sender]) + " to device " +
             std::to_string(device_ids[receiver]);
      channel->reset();
    }
  }
  return out;
}

}  // namespace meshsim
