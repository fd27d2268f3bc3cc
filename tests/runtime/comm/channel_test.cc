// Channel and GroupChannels: FIFO order between two threads (spinning and
// blocking), flow control at capacity, cancellation of a blocked receive,
// reset after an abort, lock-free creation under a race, and memory that
// grows with the pairs used on a large group.

#include "meshsim/runtime/comm/internal/channel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/runtime/exec/errors.h"

namespace meshsim {
namespace {

Array message(int32_t value) { return Array::scalar<int32_t>(value); }
int32_t value_of(const Array& a) { return a.at<int32_t>({}); }

// Blocks at once (no spin, no yield), or spins and yields first.
class ChannelFifoTest : public ::testing::TestWithParam<bool> {
 protected:
  WaitPolicy policy() const {
    return GetParam() ? WaitPolicy{} : WaitPolicy{.spin_ns = 20'000, .yield_ns = 20'000};
  }
};

// The receiver must see 0, 1, 2, ... while the sender keeps running up to
// kCapacity messages ahead and then waits: both sides block and wake many
// times, so a lost wake-up hangs this test.
TEST_P(ChannelFifoTest, ManyMessagesArriveInOrder) {
  constexpr int kMessages = 20'000;
  Channel channel;
  std::thread sender([&] {
    Waiter waiter;
    waiter.set_policy(policy());
    for (int i = 0; i < kMessages; ++i) channel.send(waiter, message(i));
  });
  Waiter waiter;
  waiter.set_policy(policy());
  std::vector<int32_t> received;
  received.reserve(kMessages);
  for (int i = 0; i < kMessages; ++i) received.push_back(value_of(channel.receive(waiter)));
  sender.join();
  std::vector<int32_t> expected(kMessages);
  for (int i = 0; i < kMessages; ++i) expected[i] = i;
  EXPECT_EQ(received, expected);
}

INSTANTIATE_TEST_SUITE_P(Channel, ChannelFifoTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Block" : "SpinThenBlock"; });

// kCapacity sends complete with nobody receiving; the next one waits until a
// message is taken.
TEST(ChannelTest, SenderWaitsOnlyWhenFull) {
  Channel channel;
  std::atomic<int> sent{0};
  Waiter sender_waiter;
  std::thread sender([&] {
    for (uint32_t i = 0; i <= Channel::kCapacity; ++i) {
      channel.send(sender_waiter, message(static_cast<int32_t>(i)));
      sent.fetch_add(1, std::memory_order_seq_cst);
    }
  });
  while (sender_waiter.blocked_on() == nullptr) std::this_thread::yield();
  EXPECT_EQ(sent.load(std::memory_order_seq_cst), static_cast<int>(Channel::kCapacity));
  Waiter waiter;
  EXPECT_EQ(value_of(channel.receive(waiter)), 0);
  sender.join();
  EXPECT_EQ(sent.load(), static_cast<int>(Channel::kCapacity) + 1);
  for (uint32_t i = 1; i <= Channel::kCapacity; ++i) {
    EXPECT_EQ(value_of(channel.receive(waiter)), static_cast<int32_t>(i));
  }
}

// A send stores the sender's array without copying it; copy-on-write keeps the
// two sides apart.
TEST(ChannelTest, MessagesShareStorageUntilWritten) {
  Channel channel;
  Waiter waiter;
  Array sent = Array::iota({4}, DType::kInt32);
  channel.send(waiter, sent);
  Array received = channel.receive(waiter);
  EXPECT_TRUE(received.shares_storage_with(sent));
  received.set<int32_t>({0}, 42);
  EXPECT_EQ(sent.at<int32_t>({0}), 0);
  EXPECT_EQ(received.at<int32_t>({0}), 42);
}

// What the abort path does: poison the word a blocked receiver sleeps on. The
// receiver gets CancelledError; reset() makes the channel usable again.
TEST(ChannelTest, PoisonCancelsABlockedReceiveAndResetRecovers) {
  Channel channel;
  Waiter receiver_waiter;
  std::atomic<bool> cancelled{false};
  std::thread receiver([&] {
    try {
      channel.receive(receiver_waiter);
    } catch (const CancelledError&) {
      cancelled = true;
    }
  });
  while (receiver_waiter.blocked_on() == nullptr) std::this_thread::yield();
  const_cast<WaitWord*>(receiver_waiter.blocked_on())->poison();
  receiver.join();
  EXPECT_TRUE(cancelled);

  channel.reset();
  Waiter waiter;
  channel.send(waiter, message(5));
  EXPECT_EQ(value_of(channel.receive(waiter)), 5);
}

// reset() drops pending messages — releasing their storage — and frees every
// slot.
TEST(ChannelTest, ResetDropsPendingMessages) {
  Channel channel;
  Waiter waiter;
  Array pending = Array::iota({4}, DType::kInt32);
  const std::byte* storage = pending.bytes();
  channel.send(waiter, pending);
  channel.send(waiter, pending);
  channel.reset();
  // Nobody shares the storage any more, so a write does not copy it.
  EXPECT_EQ(pending.mutable_bytes(), storage);
  for (uint32_t i = 0; i < Channel::kCapacity; ++i) {
    channel.send(waiter, message(static_cast<int32_t>(100 + i)));
  }
  for (uint32_t i = 0; i < Channel::kCapacity; ++i) {
    EXPECT_EQ(value_of(channel.receive(waiter)), static_cast<int32_t>(100 + i));
  }
}

TEST(GroupChannelsTest, OneChannelPerOrderedPair) {
  std::atomic<bool> used{false};
  GroupChannels channels(3, &used);
  EXPECT_EQ(channels.size(), 3);
  EXPECT_FALSE(used.load());
  EXPECT_EQ(&channels.between(1, 2), &channels.between(1, 2));
  EXPECT_NE(&channels.between(1, 2), &channels.between(2, 1));
  EXPECT_NE(&channels.between(1, 2), &channels.between(1, 0));
  EXPECT_NE(&channels.between(0, 0), &channels.between(1, 1));
  EXPECT_TRUE(used.load());
}

// Many threads released at once ask for the same, not yet created channel:
// all of them must get the same one.
TEST(GroupChannelsTest, RacingFirstUseCreatesOneChannel) {
  constexpr int kThreads = 8;
  for (int round = 0; round < 20; ++round) {
    std::atomic<bool> used{false};
    GroupChannels channels(4, &used);
    std::atomic<bool> go{false};
    std::vector<Channel*> seen(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        seen[t] = &channels.between(3, 1);
      });
    }
    go.store(true, std::memory_order_release);
    for (auto& thread : threads) thread.join();
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(seen[t], seen[0]) << "round " << round;
  }
}

TEST(GroupChannelsTest, ResetEmptiesEveryChannel) {
  std::atomic<bool> used{false};
  GroupChannels channels(2, &used);
  Waiter waiter;
  channels.between(0, 1).send(waiter, message(1));
  channels.between(1, 0).send(waiter, message(2));
  channels.reset();
  channels.between(0, 1).send(waiter, message(3));
  channels.between(1, 0).send(waiter, message(4));
  EXPECT_EQ(value_of(channels.between(0, 1).receive(waiter)), 3);
  EXPECT_EQ(value_of(channels.between(1, 0).receive(waiter)), 4);
}

TEST(GroupChannelsTest, OneRankGroupHasItsOwnChannel) {
  std::atomic<bool> used{false};
  GroupChannels channels(1, &used);
  Waiter waiter;
  channels.between(0, 0).send(waiter, message(7));
  EXPECT_EQ(value_of(channels.between(0, 0).receive(waiter)), 7);
  EXPECT_EQ(channels.channel_count(), 1u);
}

// One ring over 4096 ranks: 4096 channels, and memory of a few hundred bytes
// of index per pair on top of the channels themselves (a row of 4096 pointers
// per sender, as before, would be 128 MiB).
TEST(GroupChannelsTest, RingOnALargeGroupCreatesOnlyTheChannelsUsed) {
  constexpr int kRanks = 4096;
  std::atomic<bool> used{false};
  GroupChannels channels(kRanks, &used);
  Waiter waiter;
  for (int r = 0; r < kRanks; ++r) channels.between(r, (r + 1) % kRanks).send(waiter, message(r));
  EXPECT_EQ(channels.channel_count(), static_cast<size_t>(kRanks));
  EXPECT_LE(channels.allocated_bytes(), kRanks * (sizeof(Channel) + 512));
  for (int r = 0; r < kRanks; ++r) {
    const int from = (r + kRanks - 1) % kRanks;
    ASSERT_EQ(value_of(channels.between(from, r).receive(waiter)), from);
  }
  EXPECT_EQ(channels.channel_count(), static_cast<size_t>(kRanks));
}

// take_unreceived finds the few pairs used on a large group, sender-major,
// names them by device id and empties them.
TEST(GroupChannelsTest, TakeUnreceivedNamesTheSparsePairsUsed) {
  constexpr int kRanks = 5000;
  std::atomic<bool> used{false};
  GroupChannels channels(kRanks, &used);
  std::vector<int> device_ids(kRanks);
  for (int r = 0; r < kRanks; ++r) device_ids[r] = 10 * r;
  Waiter waiter;
  channels.between(4999, 0).send(waiter, message(1));
  channels.between(3, 4998).send(waiter, message(2));
  channels.between(3, 4998).send(waiter, message(3));
  channels.between(3, 2).send(waiter, message(4));
  (void)channels.between(0, 1);  // created, never used
  EXPECT_EQ(channels.channel_count(), 4u);
  EXPECT_EQ(channels.take_unreceived(device_ids),
            "1 from device 30 to device 20; 2 from device 30 to device 49980; "
            "1 from device 49990 to device 0");
  EXPECT_EQ(channels.take_unreceived(device_ids), "");
}

}  // namespace
}  // namespace meshsim
