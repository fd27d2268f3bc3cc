#include "meshsim/runtime/comm/internal/link.h"

#include <utility>

namespace meshsim {

uint32_t Link::post(Waiter& waiter, const void* data, size_t bytes, size_t total, size_t index) {
  return post_descriptor(waiter,
                         {static_cast<const std::byte*>(data), bytes, total, index, Array()});
}

uint32_t Link::post(Waiter& waiter, Array message) {
  const std::byte* data = message.bytes();
  const size_t bytes = message.nbytes();
  return post_descriptor(waiter, {data, bytes, bytes, 0, std::move(message)});
}

uint32_t Link::post_descriptor(Waiter& waiter, Descriptor descriptor) {
  // Only this thread advances posted_, so a relaxed load of it is current.
  const uint32_t posted = count(posted_.load(std::memory_order_relaxed));
  waiter.wait(released_,
              [posted](uint32_t value) { return distance(posted, count(value)) < kSlots; });
  ring_[posted % kSlots] = std::move(descriptor);
  posted_.advance();
  return posted;
}

void Link::wait_released(Waiter& waiter, uint32_t sequence) {
  // Only the sender calls this, so posted_ is current; `sequence` is released
  // once fewer descriptors are pending than were posted after it.
  const uint32_t posted = count(posted_.load(std::memory_order_relaxed));
  const uint32_t after = distance(posted, sequence + 1);
  waiter.wait(released_,
              [posted, after](uint32_t value) { return distance(posted, count(value)) <= after; });
}

Link::Descriptor& Link::next(Waiter& waiter) {
  const uint32_t released = count(released_.load(std::memory_order_relaxed));
  waiter.wait(posted_, [released](uint32_t value) { return count(value) != released; });
  return ring_[released % kSlots];
}

void Link::release() {
  const uint32_t released = count(released_.load(std::memory_order_relaxed));
  // Dropping the message leaves the slot without storage, so a psend's array
  // is unshared again as soon as the receiver drops its own handle.
  ring_[released % kSlots] = Descriptor();
  released_.advance();
}

void Link::reset() {
  posted_.clear_poison();
  released_.clear_poison();
  for (Descriptor& slot : ring_) slot = Descriptor();
  released_.advance(distance(count(posted_.load()), count(released_.load())));
}

}  // namespace meshsim
