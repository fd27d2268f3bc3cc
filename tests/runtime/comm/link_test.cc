// Link and Fabric: FIFO order between two threads (spinning and blocking),
// flow control at the credit limit, in-place reads released to the sender,
// cancellation of a blocked receive, reset after an abort, lock-free creation
// under a race, and memory that grows with the links used.

#include "meshsim/runtime/comm/internal/fabric.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/runtime/exec/errors.h"

namespace meshsim::link_test {
namespace {

Array message(int32_t value) { return Array::scalar<int32_t>(value); }
int32_t value_of(const Array& a) { return a.at<int32_t>({}); }

// precv's side of a message: take the oldest, release its slot.
Array receive(Link& link, Waiter& waiter) {
  link.next(waiter);
  Array m = link.take_message();
  link.release();
  return m;
}
Link& between(Fabric& fabric, int from, int to) {
  return fabric.link(from, to, Fabric::Lane::kMessages);
}

// Blocks at once (no spin, no yield), or spins and yields first.
class LinkFifoTest : public ::testing::TestWithParam<bool> {
 protected:
  WaitPolicy policy() const {
    return GetParam() ? WaitPolicy{} : WaitPolicy{.spin_ns = 20'000, .yield_ns = 20'000};
  }
};

// The receiver must see 0, 1, 2, ... while the sender keeps running up to
// kSlots messages ahead and then waits: both sides block and wake many
// times, so a lost wake-up hangs this test.
TEST_P(LinkFifoTest, ManyMessagesArriveInOrder) {
  constexpr int kMessages = 20'000;
  Link channel;
  std::thread sender([&] {
    Waiter waiter;
    waiter.set_policy(policy());
    for (int i = 0; i < kMessages; ++i) channel.post(waiter, message(i));
  });
  Waiter waiter;
  waiter.set_policy(policy());
  std::vector<int32_t> received;
  received.reserve(kMessages);
  for (int i = 0; i < kMessages; ++i) received.push_back(value_of(receive(channel, waiter)));
  sender.join();
  std::vector<int32_t> expected(kMessages);
  for (int i = 0; i < kMessages; ++i) expected[i] = i;
  EXPECT_EQ(received, expected);
}

INSTANTIATE_TEST_SUITE_P(Link, LinkFifoTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Block" : "SpinThenBlock"; });

// kSlots sends complete with nobody receiving; the next one waits until a
// message is taken.
TEST(LinkTest, SenderWaitsOnlyWhenFull) {
  Link channel;
  std::atomic<int> sent{0};
  Waiter sender_waiter;
  std::thread sender([&] {
    for (uint32_t i = 0; i <= Link::kSlots; ++i) {
      channel.post(sender_waiter, message(static_cast<int32_t>(i)));
      sent.fetch_add(1, std::memory_order_seq_cst);
    }
  });
  while (sender_waiter.blocked_on() == nullptr) std::this_thread::yield();
  EXPECT_EQ(sent.load(std::memory_order_seq_cst), static_cast<int>(Link::kSlots));
  Waiter waiter;
  EXPECT_EQ(value_of(receive(channel, waiter)), 0);
  sender.join();
  EXPECT_EQ(sent.load(), static_cast<int>(Link::kSlots) + 1);
  for (uint32_t i = 1; i <= Link::kSlots; ++i) {
    EXPECT_EQ(value_of(receive(channel, waiter)), static_cast<int32_t>(i));
  }
}

// A send stores the sender's array without copying it; copy-on-write keeps the
// two sides apart.
TEST(LinkTest, MessagesShareStorageUntilWritten) {
  Link channel;
  Waiter waiter;
  Array sent = Array::iota({4}, DType::kInt32);
  channel.post(waiter, sent);
  Array received = receive(channel, waiter);
  EXPECT_TRUE(received.shares_storage_with(sent));
  received.set<int32_t>({0}, 42);
  EXPECT_EQ(sent.at<int32_t>({0}), 0);
  EXPECT_EQ(received.at<int32_t>({0}), 42);
}

// What the abort path does: poison the word a blocked receiver sleeps on. The
// receiver gets CancelledError; reset() makes the channel usable again.
TEST(LinkTest, PoisonCancelsABlockedReceiveAndResetRecovers) {
  Link channel;
  Waiter receiver_waiter;
  std::atomic<bool> cancelled{false};
  std::thread receiver([&] {
    try {
      receive(channel, receiver_waiter);
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
  channel.post(waiter, message(5));
  EXPECT_EQ(value_of(receive(channel, waiter)), 5);
}

// reset() drops pending messages — releasing their storage — and frees every
// slot.
TEST(LinkTest, ResetDropsPendingMessages) {
  Link channel;
  Waiter waiter;
  Array pending = Array::iota({4}, DType::kInt32);
  const std::byte* storage = pending.bytes();
  channel.post(waiter, pending);
  channel.post(waiter, pending);
  channel.reset();
  // Nobody shares the storage any more, so a write does not copy it.
  EXPECT_EQ(pending.mutable_bytes(), storage);
  for (uint32_t i = 0; i < Link::kSlots; ++i) {
    channel.post(waiter, message(static_cast<int32_t>(100 + i)));
  }
  for (uint32_t i = 0; i < Link::kSlots; ++i) {
    EXPECT_EQ(value_of(receive(channel, waiter)), static_cast<int32_t>(100 + i));
  }
}

// An in-place descriptor: the receiver reads the sender's own bytes, and the
// sender learns from wait_released that its buffer is free again.
TEST(LinkTest, InPlaceReadIsReleasedToTheSender) {
  Link link;
  Waiter sender, receiver;
  std::vector<int32_t> buffer(16, 7);  // 64 bytes: more than a descriptor carries
  const uint32_t first = link.post(sender, buffer.data(), 64, 64, 0);
  const uint32_t second = link.post(sender, buffer.data() + 8, 32, 32, 0);
  const Link::Descriptor& d = link.next(receiver);
  EXPECT_EQ(d.data, reinterpret_cast<const std::byte*>(buffer.data()));
  EXPECT_EQ(d.bytes, 64u);
  link.release();
  link.wait_released(sender, first);  // returns: the first is released
  EXPECT_EQ(link.pending(), 1u);
  std::atomic<bool> released{false};
  std::thread waiter_thread([&] {
    Waiter w;
    link.wait_released(w, second);
    released = true;
  });
  EXPECT_EQ(link.next(receiver).bytes, 32u);
  link.release();
  waiter_thread.join();
  EXPECT_TRUE(released);
  EXPECT_EQ(link.pending(), 0u);
}

// A segment of at most kInlineBytes travels in its descriptor: the sender may
// overwrite its buffer as soon as post returns, and the receiver still reads
// what was posted (a larger one is read in place).
TEST(LinkTest, SmallSegmentIsCopiedAtPost) {
  Link link;
  Waiter sender, receiver;
  ASSERT_TRUE(Link::copies_at_post(Link::kInlineBytes));
  ASSERT_FALSE(Link::copies_at_post(Link::kInlineBytes + 1));
  std::vector<std::byte> buffer(Link::kInlineBytes);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = std::byte(i + 1);
  link.post(sender, buffer.data(), buffer.size(), buffer.size(), 0);
  std::vector<std::byte> posted = buffer;
  std::fill(buffer.begin(), buffer.end(), std::byte{0xff});
  const Link::Descriptor& d = link.next(receiver);
  ASSERT_EQ(d.bytes, posted.size());
  EXPECT_NE(d.data, buffer.data());
  EXPECT_EQ(std::vector<std::byte>(d.data, d.data + d.bytes), posted);
  link.release();
  EXPECT_EQ(link.pending(), 0u);
}

TEST(FabricTest, OneChannelPerOrderedPair) {
  Fabric channels(3);
  EXPECT_EQ(channels.max_devices(), 3);
  EXPECT_EQ(&between(channels, 1, 2), &between(channels, 1, 2));
  EXPECT_NE(&between(channels, 1, 2), &channels.link(1, 2, Fabric::Lane::kCollective));
  EXPECT_NE(&between(channels, 1, 2), &between(channels, 2, 1));
  EXPECT_NE(&between(channels, 1, 2), &between(channels, 1, 0));
  EXPECT_NE(&between(channels, 0, 0), &between(channels, 1, 1));
}

// Many threads released at once ask for the same, not yet created link:
// all of them must get the same one.
TEST(FabricTest, RacingFirstUseCreatesOneChannel) {
  constexpr int kThreads = 8;
  for (int round = 0; round < 20; ++round) {
    Fabric channels(4);
    std::atomic<bool> go{false};
    std::vector<Link*> seen(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        seen[t] = &between(channels, 3, 1);
      });
    }
    go.store(true, std::memory_order_release);
    for (auto& thread : threads) thread.join();
    for (int t = 1; t < kThreads; ++t) ASSERT_EQ(seen[t], seen[0]) << "round " << round;
  }
}

TEST(FabricTest, ResetEmptiesTheLinksOfTheGivenDevices) {
  Fabric channels(2);
  Waiter waiter;
  between(channels, 0, 1).post(waiter, message(1));
  between(channels, 1, 0).post(waiter, message(2));
  channels.reset([](int) { return true; });
  between(channels, 0, 1).post(waiter, message(3));
  between(channels, 1, 0).post(waiter, message(4));
  EXPECT_EQ(value_of(receive(between(channels, 0, 1), waiter)), 3);
  EXPECT_EQ(value_of(receive(between(channels, 1, 0), waiter)), 4);
  // Only links with an end among the given devices are reset.
  between(channels, 0, 0).post(waiter, message(5));
  between(channels, 1, 1).post(waiter, message(6));
  channels.reset([](int id) { return id == 1; });
  EXPECT_EQ(between(channels, 0, 0).pending(), 1u);
  EXPECT_EQ(between(channels, 1, 1).pending(), 0u);
}

TEST(FabricTest, OneRankGroupHasItsOwnChannel) {
  Fabric channels(1);
  Waiter waiter;
  between(channels, 0, 0).post(waiter, message(7));
  EXPECT_EQ(value_of(receive(between(channels, 0, 0), waiter)), 7);
  EXPECT_EQ(channels.link_count(), 1u);
}

// One ring over 4096 devices: 4096 links, and memory of a few hundred bytes
// of index per link on top of the links themselves (a row of 4096 pointers
// per sender would be 128 MiB).
TEST(FabricTest, RingOnALargeGroupCreatesOnlyTheChannelsUsed) {
  constexpr int kRanks = 4096;
  Fabric channels(kRanks);
  Waiter waiter;
  for (int r = 0; r < kRanks; ++r) between(channels, r, (r + 1) % kRanks).post(waiter, message(r));
  EXPECT_EQ(channels.link_count(), static_cast<size_t>(kRanks));
  EXPECT_LE(channels.allocated_bytes(), kRanks * (sizeof(Link) + 512));
  for (int r = 0; r < kRanks; ++r) {
    const int from = (r + kRanks - 1) % kRanks;
    ASSERT_EQ(value_of(receive(between(channels, from, r), waiter)), from);
  }
  EXPECT_EQ(channels.link_count(), static_cast<size_t>(kRanks));
}

// take_unreceived finds the few pairs used on a large group, sender-major,
// names them by device id and empties them.
TEST(FabricTest, TakeUnreceivedNamesTheSparsePairsUsed) {
  constexpr int kRanks = 5000;
  Fabric channels(kRanks);
  const auto all = [](int) { return true; };
  Waiter waiter;
  between(channels, 4999, 0).post(waiter, message(1));
  between(channels, 3, 4998).post(waiter, message(2));
  between(channels, 3, 4998).post(waiter, message(3));
  between(channels, 3, 2).post(waiter, message(4));
  (void)between(channels, 0, 1);  // created, never used
  EXPECT_EQ(channels.link_count(), 4u);
  EXPECT_EQ(channels.take_unreceived(all),
            "1 from device 3 to device 2; 2 from device 3 to device 4998; "
            "1 from device 4999 to device 0");
  EXPECT_EQ(channels.take_unreceived(all), "");
}

}  // namespace
}  // namespace meshsim::link_test
