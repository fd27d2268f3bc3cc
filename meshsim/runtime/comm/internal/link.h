#pragma once
// Link: one direction of the point-to-point fabric between two devices — a
// ring of kSlots descriptors with credits, from one sender thread to one
// receiver thread.
//
// A descriptor names bytes the receiver reads in place, in the sender's own
// buffer (zero copy: the receiver does the one memcpy or reduction), carries
// a small segment inline (one cache line from sender to receiver: the
// latency path), or owns a message (an Array, for psend / precv, whose
// sender need not wait for the receiver unless all kSlots are taken).
//
// Contract
// - At most one thread posts and one thread takes at a time (single producer,
//   single consumer); they may be the same thread.
// - post() waits only while all kSlots descriptors are posted and not yet
//   released by the receiver (the sender's credits are spent); otherwise it
//   returns at once with the sequence number of the descriptor.
// - next() waits until a descriptor is posted and returns the oldest (FIFO);
//   the receiver reads it, then release()s it, which returns the credit and
//   tells the sender its bytes were read (wait_released()).
// - Both waits go through the caller's Waiter on WaitWords, so an aborted
//   launch cancels them (CancelledError), and the deadlock detector sees a
//   receiver whose sender never posts, or a sender whose receiver never reads.
// Memory order: the sender fills the slot, then advances `posted_` (a seq_cst
// read-modify-write, so it releases the slot and the bytes it names); the
// receiver observes the count with an acquire load before it reads the slot.
// Symmetrically the receiver finishes reading before it advances `released_`,
// and the sender reuses the slot — or its buffer — only after observing that.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim {

// What a sender keeping virtual time or a trace posts with a transfer.
struct LinkStamp {
  double departure = 0;  // its virtual clock when the transfer began
  uint64_t flow = 0;     // the transfer's trace flow id (0: not traced)
};

class Link {
 public:
  // How far a sender may run ahead of its receiver, in descriptors.
  static constexpr uint32_t kSlots = 8;
  // Segments up to this size travel inside their descriptor (copied at post),
  // so the receiver finds the bytes in the cache line that announced them.
  static constexpr size_t kInlineBytes = 24;

  // One cache line, so a receiver reading slot k never shares a line with the
  // sender filling slot k + 1.
  struct alignas(64) Descriptor {
    const std::byte* data = nullptr;  // the bytes to read (the sender's, or inline_bytes)
    size_t bytes = 0;
    // The whole transfer this segment belongs to, and its place in it, so a
    // receiver that expects another transfer fails on its first segment.
    size_t total = 0;
    size_t index = 0;
    std::array<std::byte, kInlineBytes> inline_bytes{};
    bool has_message = false;  // an owned message (psend) waits in this slot
  };

  // Whether a segment of `bytes` is copied into its descriptor at post (the
  // sender's buffer is then free when post returns).
  static bool copies_at_post(size_t bytes) { return bytes <= kInlineBytes; }

  // Waits (through `waiter`) for a credit, then posts `bytes` at `data`: read
  // in place, so they must stay valid and unchanged until released, unless
  // copies_at_post(bytes). `stamp` is for a receiver keeping virtual time or
  // a trace (none without either: the stamp lines are then left alone).
  // Returns the descriptor's sequence number.
  uint32_t post(Waiter& waiter, const void* data, size_t bytes, size_t total, size_t index,
                std::optional<LinkStamp> stamp = std::nullopt);
  // The same with an owned message: the sender may return and forget it.
  uint32_t post(Waiter& waiter, Array message, std::optional<LinkStamp> stamp = std::nullopt);
  // Waits until descriptor `sequence` (and every one before it) is released.
  // Sender side only.
  void wait_released(Waiter& waiter, uint32_t sequence);
  // Waits until every descriptor posted so far is released. Sender side only.
  void wait_all_released(Waiter& waiter);

  // Waits until a descriptor is posted and returns the oldest one.
  const Descriptor& next(Waiter& waiter);
  // The owned message of the descriptor next() returned (an empty Array if it
  // has none), moved out.
  Array take_message();
  // The stamp posted with the descriptor next() returned (only when the
  // sender gave one: the devices of a launch all keep virtual time or none
  // does, and likewise for traces).
  LinkStamp stamp() const;
  // Releases the descriptor next() returned (dropping an owned message).
  void release();

  // Drops every pending descriptor and clears the poison of both words. Only
  // when no thread can be inside this link.
  void reset();
  // Descriptors posted and not yet released. Only when no thread is inside.
  uint32_t pending() const { return distance(count(posted_.load()), count(released_.load())); }

 private:
  // Counts are the WaitWord values without the poison bit, so they wrap at
  // 2^31; kSlots divides that, so count % kSlots names a slot.
  static_assert((kSlots & (kSlots - 1)) == 0, "kSlots must be a power of two");
  static_assert(sizeof(Descriptor) == 64, "a descriptor is one cache line");
  static uint32_t count(uint32_t word) { return word >> 1; }
  static uint32_t distance(uint32_t later, uint32_t earlier) {
    return (later - earlier) & 0x7fff'ffff;
  }
  // Waits for a credit and returns the slot to fill for the next descriptor.
  Descriptor& claim(Waiter& waiter);
  // Publishes the slot claim() returned; returns its sequence number.
  uint32_t publish();

  WaitWord posted_;    // advanced by the sender once per descriptor
  WaitWord released_;  // advanced by the receiver once per descriptor
  // The sender's last look at released_ (in its own line): while it shows a
  // free slot, posting reads nothing the receiver writes.
  alignas(64) uint32_t released_seen_ = 0;
  std::array<Descriptor, kSlots> ring_;
  std::array<Array, kSlots> messages_;  // owned messages, by slot (psend only)
  // Stamps by slot, in lines of their own: only a receiver keeping virtual
  // time or a trace reads them, so without them the lines stay in the
  // sender's cache.
  alignas(64) std::array<LinkStamp, kSlots> stamps_{};
};

}  // namespace meshsim
