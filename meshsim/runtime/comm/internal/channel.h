#pragma once
// Channel: the point-to-point primitive — a bounded FIFO of Arrays from one
// sender thread to one receiver thread. psend / precv and the point-to-point
// collective algorithms are built on it.
//
// Contract
// - At most one thread sends and one thread receives at a time (single
//   producer, single consumer); they may be the same thread.
// - send() returns as soon as the message sits in a slot: it waits only while
//   all kCapacity slots hold messages the receiver has not taken yet.
//   receive() waits until a message is there and returns the oldest (FIFO).
// - A slot holds a copy of the sender's Array, which shares its storage
//   (copy-on-write, runtime/array.h): no element is copied, and a later write
//   on either side is invisible to the other.
// - Both waits go through the caller's Waiter on WaitWords, so an aborted
//   launch cancels them (CancelledError), and the deadlock detector sees a
//   receiver whose sender never sends, or a sender whose receiver never takes.
// - A message nobody receives never outlives its launch: after a launch that
//   succeeded, MeshState::take_unreceived_messages reports and drops it (the
//   launch then fails with UnreceivedMessageError); after an aborted launch,
//   reset() (MeshState::reset_after_abort) empties the channel.
// Memory order: the sender fills the slot, then advances `sent_` (a seq_cst
// read-modify-write, so it releases the slot); the receiver observes the new
// count with an acquire load before it reads the slot. Symmetrically, the
// receiver empties the slot before it advances `received_`, and the sender
// reuses a slot only after it has observed that.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim {

class Channel {
 public:
  // How far a sender may run ahead of its receiver, in messages.
  static constexpr uint32_t kCapacity = 8;

  // Waits (through `waiter`) while the channel is full, then enqueues.
  void send(Waiter& waiter, Array message);
  // Waits (through `waiter`) while the channel is empty, then dequeues.
  Array receive(Waiter& waiter);

  // Drops every pending message and clears the poison of both words. Only when
  // no thread can be inside send() or receive().
  void reset();
  // Messages sent and not yet received. Only when no thread is inside
  // send() or receive().
  uint32_t pending() const { return distance(count(sent_.load()), count(received_.load())); }

 private:
  // Message counts are the WaitWord values without the poison bit, so they
  // wrap at 2^31; kCapacity divides that, so count % kCapacity names a slot.
  static_assert((kCapacity & (kCapacity - 1)) == 0, "kCapacity must be a power of two");
  static uint32_t count(uint32_t word) { return word >> 1; }
  static uint32_t distance(uint32_t later, uint32_t earlier) {
    return (later - earlier) & 0x7fff'ffff;
  }

  WaitWord sent_;      // advanced by the sender once per message
  WaitWord received_;  // advanced by the receiver once per message
  std::array<Array, kCapacity> slots_;
};

// The channels among the members of one device group, one per ordered
// (sender rank, receiver rank) pair, created on first use. Memory grows with
// the pairs used, not with size() squared: the channels hang off a radix tree
// keyed by sender * size() + receiver, kBits bits a level, so a pair costs its
// Channel plus at most one node a level (a ring over 4096 ranks: about
// 3 nodes a pair). Lookups take no lock: a missing node or channel is built
// and installed with a compare-and-swap (acq_rel, so the winner's construction
// is visible to every later acquire load); a thread that loses the race deletes
// its copy.
class GroupChannels {
 public:
  // `used` is set on the first channel created (so a launch that sent nothing
  // need not scan for unreceived messages).
  GroupChannels(int size, std::atomic<bool>* used);
  ~GroupChannels();
  GroupChannels(const GroupChannels&) = delete;
  GroupChannels& operator=(const GroupChannels&) = delete;

  int size() const { return size_; }
  // The channel from rank `sender` to rank `receiver`; both in [0, size()).
  Channel& between(int sender, int receiver);
  // Channel::reset on every channel. Only when no thread can use them.
  void reset();
  // Describes every message sent and never received ("2 from device 1 to
  // device 3", with `device_ids` by rank) and drops them. Only when no thread
  // can use the channels.
  std::string take_unreceived(std::span<const int> device_ids);

  // Channels created so far, and the heap bytes of the tree plus those
  // channels (for tests and memory reports).
  size_t channel_count() const { return channels_.load(std::memory_order_relaxed); }
  size_t allocated_bytes() const;

 private:
  static constexpr int kBits = 4;
  static constexpr int kFanout = 1 << kBits;
  // A child is a Node* on every level but the last, where it is a Channel*.
  struct Node {
    std::array<std::atomic<void*>, kFanout> child{};
  };
  // Calls visit(key, Channel&) on every channel created, in key order.
  template <class Visit>
  void for_each_channel(Visit visit);
  void destroy(Node* node, int level);

  int size_;
  int levels_;  // radix digits of the largest key, at least 1
  std::atomic<bool>* used_;
  Node root_;
  std::atomic<size_t> nodes_{0};  // heap nodes (not counting root_)
  std::atomic<size_t> channels_{0};
};

}  // namespace meshsim
