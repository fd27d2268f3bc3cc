// Copy modes and race detection (KernelSpec::set_copy_mode,
// set_race_detection): a correct kernel gives the same answer in every mode
// and raises nothing; each kind of ordering bug shows up as a known wrong
// value in a known mode, and as a DataRaceError naming both accesses.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "meshsim/mesh/internal/sanitizers.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/run_kernel.h"
#include "support/expect_error.h"
#include "support/scoped_env.h"

namespace meshsim::copy_mode_test {
namespace {

Mesh line(int n) { return Mesh::make({{"x", n}}); }

struct Mode {
  CopyMode copies;
  uint64_t seed;
};
// The sanitizer jobs run two seeds; the normal build eight.
#if MESHSIM_TSAN || MESHSIM_ASAN
constexpr uint64_t kSeeds = 2;
#else
constexpr uint64_t kSeeds = 8;
#endif
std::vector<Mode> every_mode() {
  std::vector<Mode> modes = {{CopyMode::kEager, 0}, {CopyMode::kOnWait, 0}};
  for (uint64_t seed = 0; seed < kSeeds; ++seed) modes.push_back({CopyMode::kRandom, seed});
  return modes;
}

// Ring all-gather by remote DMAs: device d's row travels right, one hop a
// step; every row is written once on every device, so no handshake is
// needed. Returns each device's gathered rows.
std::vector<std::vector<int32_t>> ring_all_gather(Runtime& rt, int n, Mode mode, bool races) {
  std::vector<std::vector<int32_t>> out(n);
  rt.launch(line(n), [&](DeviceContext& ctx) {
    KernelSpec spec("ring_all_gather");
    spec.set_copy_mode(mode.copies, mode.seed).set_race_detection(races);
    const BufferRef rows = spec.buffer({n, 3}, DType::kInt32);
    const DmaSemaphore send = spec.dma_semaphore();
    const DmaSemaphore recv = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      const int me = k.device_id();
      for (int32_t& v : k.write<int32_t>(rows.at(me))) v = 100 * me + 7;
      for (int step = 0; step + 1 < n; ++step) {
        const int forward = (me - step + n) % n;  // the row received last step (or own)
        AsyncCopy out_copy = k.make_async_remote_copy(rows.at(forward), rows.at(forward), send,
                                                      recv, (me + 1) % n);
        out_copy.start();
        const int incoming = (me - step - 1 + n) % n;
        k.make_async_remote_copy(rows.at(incoming), rows.at(incoming), send, recv, me).wait_recv();
        out_copy.wait_send();
      }
      const auto all = k.read<int32_t>(rows);
      out[me].assign(all.begin(), all.end());
    });
  });
  return out;
}

TEST(CopyModeTest, ACorrectKernelGivesTheSameResultInEveryMode) {
  for (int n : {2, 3, 5, 8, 64}) {
    Runtime rt(n);
    std::vector<int32_t> expected;
    for (int d = 0; d < n; ++d) expected.insert(expected.end(), 3, 100 * d + 7);
    for (const Mode& mode : every_mode()) {
      for (bool races : {false, true}) {
        if (n == 64 && mode.copies == CopyMode::kRandom && mode.seed > 0) continue;
        const auto got = ring_all_gather(rt, n, mode, races);
        for (int d = 0; d < n; ++d) {
          ASSERT_EQ(got[d], expected) << "n=" << n << " mode=" << static_cast<int>(mode.copies)
                                      << " seed=" << mode.seed << " races=" << races;
        }
      }
    }
  }
}

// Device 0 copies 42 to device 1 and tells it by a regular semaphore, which
// a DMA does not wait for (`send_first`: after waiting for the send); device
// 1 reads before waiting for the copy.
int32_t read_before_wait_recv(CopyMode mode, bool races = false, bool send_first = false) {
  Runtime rt(2);
  int32_t seen = -1;
  rt.launch(line(2), [&](DeviceContext& ctx) {
    KernelSpec spec("early_read");
    spec.set_copy_mode(mode).set_race_detection(races);
    const BufferRef buf = spec.buffer({4}, DType::kInt32);
    const Semaphore ready = spec.semaphore();
    const DmaSemaphore send = spec.dma_semaphore();
    const DmaSemaphore recv = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      AsyncCopy copy = k.make_async_remote_copy(buf, buf, send, recv, 1);
      if (k.device_id() == 0) {
        for (int32_t& v : k.write<int32_t>(buf)) v = 42;
        copy.start();
        if (send_first) copy.wait_send();
        k.semaphore_signal(ready, 1, 1);
        if (!send_first) copy.wait_send();
      } else {
        k.semaphore_wait(ready);
        seen = k.read<int32_t>(buf)[0];  // the bug: before wait_recv
        copy.wait_recv();
      }
    });
  });
  return seen;
}

TEST(CopyModeTest, OnWaitShowsAReadBeforeTheWait) {
  EXPECT_EQ(read_before_wait_recv(CopyMode::kEager), 42);
  EXPECT_EQ(read_before_wait_recv(CopyMode::kOnWait), 0);
}

// Device 0 changes the source after start() and before wait_send().
int32_t source_written_before_send(CopyMode mode, bool races = false) {
  Runtime rt(2);
  int32_t seen = -1;
  rt.launch(line(2), [&](DeviceContext& ctx) {
    KernelSpec spec("early_write");
    spec.set_copy_mode(mode).set_race_detection(races);
    const BufferRef buf = spec.buffer({4}, DType::kInt32);
    const Semaphore sent = spec.semaphore();
    const DmaSemaphore send = spec.dma_semaphore();
    const DmaSemaphore recv = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      AsyncCopy copy = k.make_async_remote_copy(buf, buf, send, recv, 1);
      if (k.device_id() == 0) {
        for (int32_t& v : k.write<int32_t>(buf)) v = 1;
        copy.start();
        for (int32_t& v : k.write<int32_t>(buf)) v = 2;  // the bug: before wait_send
        copy.wait_send();
        k.semaphore_signal(sent, 1, 1);
      } else {
        k.semaphore_wait(sent);
        copy.wait_recv();
        seen = k.read<int32_t>(buf)[0];
      }
    });
  });
  return seen;
}

TEST(CopyModeTest, OnWaitShowsASourceWrittenBeforeTheSendCompleted) {
  EXPECT_EQ(source_written_before_send(CopyMode::kEager), 1);
  EXPECT_EQ(source_written_before_send(CopyMode::kOnWait), 2);
}

// Two copies in flight to the same bytes, counted by two semaphores that
// the receiver waits for in turn: which lands last depends on whether the
// seed lands the second one early, at start(); the same seed, the same
// answer.
int32_t last_of_two_copies(uint64_t seed) {
  Runtime rt(2);
  int32_t seen = -1;
  rt.launch(line(2), [&](DeviceContext& ctx) {
    KernelSpec spec("two_writers");
    spec.set_copy_mode(CopyMode::kRandom, seed);
    const BufferRef a = spec.buffer({4}, DType::kInt32);
    const BufferRef b = spec.buffer({4}, DType::kInt32);
    const BufferRef dst = spec.buffer({4}, DType::kInt32);
    const Semaphore started = spec.semaphore();
    const DmaSemaphore send = spec.dma_semaphore();
    const DmaSemaphore recv_a = spec.dma_semaphore();
    const DmaSemaphore recv_b = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      AsyncCopy from_a = k.make_async_remote_copy(a, dst, send, recv_a, 1);
      AsyncCopy from_b = k.make_async_remote_copy(b, dst, send, recv_b, 1);
      if (k.device_id() == 0) {
        for (int32_t& v : k.write<int32_t>(a)) v = 1;
        for (int32_t& v : k.write<int32_t>(b)) v = 2;
        from_a.start();
        from_b.start();
        k.semaphore_signal(started, 1, 1);
        from_a.wait_send();
        from_b.wait_send();
      } else {
        k.semaphore_wait(started);
        from_a.wait_recv();
        from_b.wait_recv();
        seen = k.read<int32_t>(dst)[0];
      }
    });
  });
  return seen;
}

TEST(CopyModeTest, RandomOrderIsFixedByTheSeed) {
  std::set<int32_t> outcomes;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    const int32_t first = last_of_two_copies(seed);
    EXPECT_EQ(last_of_two_copies(seed), first) << "seed " << seed;
    EXPECT_EQ(last_of_two_copies(seed), first) << "seed " << seed;
    outcomes.insert(first);
  }
  EXPECT_EQ(outcomes, (std::set<int32_t>{1, 2}));  // both orders occur
}

TEST(CopyModeTest, TheEnvironmentChoosesTheDefault) {
  // Restored after (a suite may be run with MESHSIM_KERNEL_COPIES set: the
  // tests after this one must still see it).
  const testing_support::ScopedEnv copies("MESHSIM_KERNEL_COPIES", "random:123");
  const testing_support::ScopedEnv races("MESHSIM_KERNEL_RACES", "1");
  const KernelSpec spec;
  EXPECT_EQ(spec.copy_mode(), CopyMode::kRandom);
  EXPECT_EQ(spec.copy_seed(), 123u);
  EXPECT_TRUE(spec.race_detection());
  ASSERT_EQ(setenv("MESHSIM_KERNEL_COPIES", "sometimes", 1), 0);
  EXPECT_ERROR(KernelSpec(), InvalidArgumentError, "MESHSIM_KERNEL_COPIES='sometimes'");
  ASSERT_EQ(setenv("MESHSIM_KERNEL_COPIES", "random:", 1), 0);
  EXPECT_ERROR(KernelSpec(), InvalidArgumentError, "random:SEED");
  ASSERT_EQ(setenv("MESHSIM_KERNEL_COPIES", "on_wait", 1), 0);
  ASSERT_EQ(setenv("MESHSIM_KERNEL_RACES", "yes", 1), 0);
  EXPECT_ERROR(KernelSpec(), InvalidArgumentError, "MESHSIM_KERNEL_RACES='yes'");
  unsetenv("MESHSIM_KERNEL_COPIES");
  unsetenv("MESHSIM_KERNEL_RACES");
  EXPECT_EQ(KernelSpec().copy_mode(), CopyMode::kEager);
  EXPECT_ERROR(KernelSpec().set_copy_mode(static_cast<CopyMode>(9)), InvalidArgumentError,
               "copy mode 9");
}

// --- race detection ---

TEST(RaceDetectionTest, AReadBeforeTheCopyIsWaitedForIsARaceInEveryMode) {
  for (CopyMode mode : {CopyMode::kEager, CopyMode::kOnWait, CopyMode::kRandom}) {
    EXPECT_ERROR(read_before_wait_recv(mode, true), DataRaceError,
                 "data race in kernel 'early_read' on buffer 0 of device 1: the read of bytes "
                 "[0, 16) by device 1 conflicts with the DMA write of bytes [0, 16) by a DMA "
                 "started by device 0, and no semaphore wait orders the two");
  }
}

// The issuer waits for the send before telling the receiver: the source was
// read, but nothing says the bytes arrived.
TEST(RaceDetectionTest, ASendCompletedDoesNotOrderTheCopysWrite) {
  EXPECT_ERROR(read_before_wait_recv(CopyMode::kEager, true, /*send_first=*/true), DataRaceError,
               "the read of bytes [0, 16) by device 1 conflicts with the DMA write");
}

TEST(RaceDetectionTest, AWriteToASourceBeforeItsSendCompletedIsARace) {
  EXPECT_ERROR(source_written_before_send(CopyMode::kEager, true), DataRaceError,
               "on buffer 0 of device 0: the write of bytes [0, 16) by device 0 conflicts with "
               "the DMA read of bytes [0, 16) by a DMA started by device 0");
}

TEST(RaceDetectionTest, TwoCopiesFromTwoDevicesToTheSameBytesAreARace) {
  Runtime rt(3);
  EXPECT_ERROR(rt.launch(line(3),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("two_senders");
                           spec.set_race_detection(true);
                           const BufferRef buf = spec.buffer({8}, DType::kUInt8);
                           const DmaSemaphore send = spec.dma_semaphore();
                           const DmaSemaphore recv = spec.dma_semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             if (k.device_id() == 2) {
                               AsyncCopy c = k.make_async_remote_copy(buf, buf, send, recv, 2);
                               c.wait_recv();
                               c.wait_recv();
                               return;
                             }
                             AsyncCopy c = k.make_async_remote_copy(buf.slice(0, 8), buf, send,
                                                                    recv, 2);
                             c.start();
                             c.wait_send();
                           });
                         }),
               DataRaceError, "conflicts with the DMA write of bytes [0, 8) by a DMA started by device");
}

// A receiver that reads what arrived, while the sender already sends the
// next block into the same buffer without waiting for a "slot free" signal.
TEST(RaceDetectionTest, OverwritingABufferItsOwnerStillReadsIsARace) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(line(2),
                         [&](DeviceContext& ctx) {
                           KernelSpec spec("no_handshake");
                           spec.set_race_detection(true);
                           const BufferRef buf = spec.buffer({4}, DType::kFloat32);
                           const DmaSemaphore send = spec.dma_semaphore();
                           const DmaSemaphore recv = spec.dma_semaphore();
                           run_kernel(ctx, spec, [&](KernelContext& k) {
                             AsyncCopy c = k.make_async_remote_copy(buf, buf, send, recv, 1);
                             if (k.device_id() == 0) {
                               for (int round = 0; round < 2; ++round) {
                                 c.start();
                                 c.wait_send();
                               }
                             } else {
                               for (int round = 0; round < 2; ++round) {
                                 c.wait_recv();
                                 (void)k.read<float>(buf);
                               }
                             }
                           });
                         }),
               DataRaceError, "data race in kernel 'no_handshake' on buffer 0 of device 1");
}

// Device 1 sends its buffer to device 0; device 0, once it received it,
// sends its own buffer into device 1's, the first copy's source. The receive
// means the first copy has read that source too (a DMA reads before it
// writes), so the second may overwrite it: no race, in every mode.
TEST(RaceDetectionTest, AReceiveOrdersTheCopysReadOfItsSource) {
  for (const Mode mode : every_mode()) {
    Runtime rt(2);
    std::vector<std::vector<int32_t>> got(2);
    rt.launch(line(2), [&](DeviceContext& ctx) {
      KernelSpec spec("swap_after_receive");
      spec.set_copy_mode(mode.copies, mode.seed).set_race_detection(true);
      const BufferRef mine = spec.buffer({4}, DType::kInt32);
      const BufferRef landed = spec.buffer({4}, DType::kInt32);
      const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
      const DmaSemaphore send_back = spec.dma_semaphore(), recv_back = spec.dma_semaphore();
      run_kernel(ctx, spec, [&](KernelContext& k) {
        const int me = k.device_id();
        for (int32_t& v : k.write<int32_t>(mine)) v = 10 * (me + 1);
        if (me == 1) {
          AsyncCopy there = k.make_async_remote_copy(mine, landed, send, recv, 0);
          there.start();
          k.make_async_remote_copy(mine, mine, send_back, recv_back, 1).wait_recv();
          there.wait_send();
        } else {
          k.make_async_remote_copy(mine, landed, send, recv, 0).wait_recv();
          AsyncCopy back = k.make_async_remote_copy(mine, mine, send_back, recv_back, 1);
          back.start();
          back.wait_send();
        }
        const auto values = k.read<int32_t>(me == 0 ? landed : mine);
        got[me].assign(values.begin(), values.end());
      });
    });
    // Device 0 received device 1's 20s, and device 1 device 0's 10s.
    EXPECT_EQ(got[0], std::vector<int32_t>(4, 20));
    EXPECT_EQ(got[1], std::vector<int32_t>(4, 10));
  }
}

// A second copy that overwrites the first one's source before anything
// waited for the first: the first may read old or new bytes (in on_wait and
// random modes it reads late), so it is a race in every mode.
TEST(RaceDetectionTest, ALaterCopyOverwritingAnEarlierCopysSourceIsARace) {
  for (const Mode mode : every_mode()) {
    Runtime rt(2);
    EXPECT_ERROR(
        rt.launch(line(2),
                  [&](DeviceContext& ctx) {
                    KernelSpec spec("double_buffer");
                    spec.set_copy_mode(mode.copies, mode.seed).set_race_detection(true);
                    const BufferRef a = spec.buffer({4}, DType::kInt32);
                    const BufferRef b = spec.buffer({4}, DType::kInt32);
                    const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
                    const DmaSemaphore local = spec.dma_semaphore();
                    run_kernel(ctx, spec, [&](KernelContext& k) {
                      AsyncCopy out = k.make_async_remote_copy(a, b, send, recv, 1);
                      if (k.device_id() == 1) {
                        out.wait_recv();
                        return;
                      }
                      out.start();
                      AsyncCopy refill = k.make_async_copy(b, a, local);
                      refill.start();
                      refill.wait();
                      out.wait_send();
                    });
                  }),
        DataRaceError,
        "the DMA write of bytes [0, 16) by a DMA started by device 0 conflicts with the DMA "
        "read of bytes [0, 16) by a DMA started by device 0");
  }
}

TEST(RaceDetectionTest, AHandshakeOrdersTheReuse) {
  Runtime rt(2);
  rt.launch(line(2), [&](DeviceContext& ctx) {
    KernelSpec spec("handshake");
    spec.set_race_detection(true);
    const BufferRef buf = spec.buffer({4}, DType::kFloat32);
    const Semaphore free_slot = spec.semaphore();
    const DmaSemaphore send = spec.dma_semaphore();
    const DmaSemaphore recv = spec.dma_semaphore();
    run_kernel(ctx, spec, [&](KernelContext& k) {
      AsyncCopy c = k.make_async_remote_copy(buf, buf, send, recv, 1);
      for (int round = 0; round < 5; ++round) {
        if (k.device_id() == 0) {
          if (round > 0) k.semaphore_wait(free_slot);
          c.start();
          c.wait_send();
        } else {
          c.wait_recv();
          (void)k.read<float>(buf);
          if (round < 4) k.semaphore_signal(free_slot, 1, 0);
        }
      }
    });
  });
}

}  // namespace
}  // namespace meshsim::copy_mode_test
