#include "meshsim/runtime/comm/internal/link.h"

#include <cstring>
#include <utility>

namespace meshsim {

Link::Descriptor& Link::claim(Waiter& waiter) {
  // Only this thread advances posted_, so a relaxed load of it is current.
  const uint32_t posted = count(posted_.load(std::memory_order_relaxed));
  if (distance(posted, released_seen_) >= kSlots) {
    released_seen_ = count(waiter.wait(
        released_, [posted](uint32_t value) { return distance(posted, count(value)) < kSlots; }));
  }
  return ring_[posted % kSlots];
}

uint32_t Link::publish() { return distance(count(posted_.advance()), 1); }

uint32_t Link::post(Waiter& waiter, const void* data, size_t bytes, size_t total, size_t index,
                    std::optional<LinkStamp> stamp) {
  Descriptor& d = claim(waiter);
  if (stamp) stamps_[&d - ring_.data()] = *stamp;
  if (copies_at_post(bytes)) {
    if (bytes > 0) std::memcpy(d.inline_bytes.data(), data, bytes);
    d.data = d.inline_bytes.data();
  } else {
    d.data = static_cast<const std::byte*>(data);
  }
  d.bytes = bytes;
  d.total = total;
  d.index = index;
  return publish();
}

uint32_t Link::post(Waiter& waiter, Array message, std::optional<LinkStamp> stamp) {
  Descriptor& d = claim(waiter);
  if (stamp) stamps_[&d - ring_.data()] = *stamp;
  d.data = message.bytes();
  d.bytes = message.nbytes();
  d.total = d.bytes;
  d.index = 0;
  d.has_message = true;
  messages_[&d - ring_.data()] = std::move(message);
  return publish();
}

void Link::wait_released(Waiter& waiter, uint32_t sequence) {
  // Only the sender calls this, so posted_ is current; `sequence` is released
  // once fewer descriptors are pending than were posted after it.
  const uint32_t posted = count(posted_.load(std::memory_order_relaxed));
  const uint32_t after = distance(posted, sequence + 1);
  released_seen_ = count(waiter.wait(
      released_, [posted, after](uint32_t value) { return distance(posted, count(value)) <= after; }));
}

void Link::wait_all_released(Waiter& waiter) {
  const uint32_t posted = count(posted_.load(std::memory_order_relaxed));
  if (distance(posted, released_seen_) == 0) return;
  released_seen_ = count(waiter.wait(released_, [posted](uint32_t value) { return count(value) == posted; }));
}

const Link::Descriptor& Link::next(Waiter& waiter) {
  const uint32_t released = count(released_.load(std::memory_order_relaxed));
  waiter.wait(posted_, [released](uint32_t value) { return count(value) != released; });
  return ring_[released % kSlots];
}

Array Link::take_message() {
  const uint32_t slot = count(released_.load(std::memory_order_relaxed)) % kSlots;
  return ring_[slot].has_message ? std::move(messages_[slot]) : Array();
}

LinkStamp Link::stamp() const {
  return stamps_[count(released_.load(std::memory_order_relaxed)) % kSlots];
}

void Link::release() {
  const uint32_t slot = count(released_.load(std::memory_order_relaxed)) % kSlots;
  // Only a message's slot is written: a plain segment's line stays clean in
  // the sender's cache. Dropping the message leaves the slot without storage,
  // so a psend's array is unshared again once the receiver drops its handle.
  if (ring_[slot].has_message) {
    messages_[slot] = Array();
    ring_[slot].has_message = false;
  }
  released_.advance();
}

void Link::reset() {
  posted_.clear_poison();
  released_.clear_poison();
  for (Descriptor& slot : ring_) slot = Descriptor();
  for (Array& message : messages_) message = Array();
  released_.advance(distance(count(posted_.load()), count(released_.load())));
  released_seen_ = count(released_.load());
}

}  // namespace meshsim
