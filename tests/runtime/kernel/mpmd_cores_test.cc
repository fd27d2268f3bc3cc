// mpmd_map with several functions on one device (the core types of one
// chip): the functions share the device's buffers and semaphores, each runs
// on a core of its own (its own waits, clock and trace), and the launch's
// errors, race detection and virtual time see each function. Every value is
// checked against a sequential reading of the programs.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/mpmd_map.h"
#include "meshsim/runtime/kernel/run_kernel.h"
#include "meshsim/runtime/time/congestion_aware_model.h"
#include "meshsim/runtime/time/congestion_unaware_model.h"
#include "meshsim/runtime/time/virtual_time.h"
#include "meshsim/runtime/trace/chrome_trace.h"
#include "support/expect_error.h"
#include "support/fully_connected_time.h"
#include "support/line_mesh.h"

namespace meshsim::mpmd_cores_test {
namespace {

// Program 0 writes the device's buffer and signals the device's own
// semaphore; program 1, on the same devices, waits for it and reads what
// program 0 wrote: one memory, one semaphore.
TEST(MpmdCoresTest, FunctionsOnOneDeviceShareItsBuffersAndSemaphores) {
  Runtime rt(2);
  KernelSpec spec("shared_memory");
  const BufferRef buf = spec.buffer({4}, DType::kInt32);
  const Semaphore ready = spec.semaphore();
  std::vector<int> read(4, -1), device(4, -1), program_device(4, -1);
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", {0, 1}),
       [&](KernelContext& k) {
         for (int32_t& v : k.write<int32_t>(buf)) v = (k.axis_index("x") + 1) * 10;
         k.semaphore_signal(ready, 1);
         device[k.device_id()] = k.device().device_id();
         program_device[k.device_id()] = k.program_device_id();
       }},
      {line_mesh("x", {1, 0}), [&](KernelContext& k) {
         k.semaphore_wait(ready);
         read[k.device_id()] = k.read<int32_t>(buf)[2];
         device[k.device_id()] = k.device().device_id();
         program_device[k.device_id()] = k.program_device_id();
       }}};
  mpmd_map(rt, programs, spec);
  // Program 1 lists device 1 first: its logical ids 2, 3 are devices 1, 0,
  // at coordinate x 0, 1 of its own mesh; what it reads is program 0's
  // value on that device (device d has x = d there).
  EXPECT_EQ(device, (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(program_device, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(read[2], 20);
  EXPECT_EQ(read[3], 10);
  // The cores are no devices of their own.
  EXPECT_EQ(rt.started_devices(), 2);
  // The runtime goes on as before, on the same devices.
  int ran = 0;
  mpmd_map(rt, {{line_mesh("x", {0}), [&](KernelContext&) { ++ran; }}}, spec);
  EXPECT_EQ(ran, 1);
}

// A kernel launched inside the functions' bodies, on the launch's mesh,
// sees the same memory layout: the two functions on device 0 share it.
TEST(MpmdCoresTest, AKernelInsideTheBodiesSharesTheDevicesMemoryToo) {
  Runtime rt(1);
  KernelSpec outer("outer"), inner("inner");
  const BufferRef buf = inner.buffer({2}, DType::kInt32);
  const Semaphore ready = inner.semaphore();
  std::vector<int> read(2, -1), index(2, -1);
  auto body = [&](KernelContext& k) {
    run_kernel(k.device(), inner, [&](KernelContext& in) {
      index[in.device_id()] = in.axis_index(kMpmdAxis);
      if (in.device_id() == 0) {
        in.write<int32_t>(buf)[1] = 42;
        in.semaphore_signal(ready, 1);
      } else {
        in.semaphore_wait(ready);
        read[1] = in.read<int32_t>(buf)[1];
      }
    });
  };
  mpmd_map(rt, {{line_mesh("a", {0}), body}, {line_mesh("b", {0}), body}}, outer);
  EXPECT_EQ(read[1], 42);
  EXPECT_EQ(index, (std::vector<int>{0, 1}));
}

// A second core of each device copies the device's `src` into the other
// device's `dst`, where that device's first core waits for it: remote DMAs
// issued by one core and received by another, in every copy mode, with race
// detection on (a correct kernel raises nothing).
TEST(MpmdCoresTest, ACoreCopiesIntoAnotherDevicesMemoryForItsOtherCore) {
  Runtime rt(2);
  KernelSpec spec("dma_core");
  const BufferRef src = spec.buffer({8}, DType::kInt32), dst = spec.buffer({8}, DType::kInt32);
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  spec.set_race_detection(true);
  std::vector<std::vector<int32_t>> got(2);
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", {0, 1}),
       [&](KernelContext& k) {
         k.make_async_remote_copy(src, dst, send, recv, k.device_id()).wait_recv();
         const auto values = k.read<int32_t>(dst);
         got[k.program_device_id()].assign(values.begin(), values.end());
       }},
      {line_mesh("x", {0, 1}), [&](KernelContext& k) {
         const int x = k.axis_index("x");
         const auto out = k.write<int32_t>(src);
         for (int i = 0; i < 8; ++i) out[i] = x * 100 + i;
         AsyncCopy copy = k.make_async_remote_copy(src, dst, send, recv,
                                                   k.logical_id(0, DeviceId::mesh({1 - x})));
         copy.start();
         copy.wait_send();
       }}};
  for (CopyMode mode : {CopyMode::kEager, CopyMode::kOnWait, CopyMode::kRandom}) {
    for (uint64_t seed : {1, 2, 3}) {
      SCOPED_TRACE("copy mode " + std::to_string(static_cast<int>(mode)) + ", seed " +
                   std::to_string(seed));
      spec.set_copy_mode(mode, seed);
      got.assign(2, {});
      mpmd_map(rt, programs, spec);
      for (int d = 0; d < 2; ++d) {
        for (int i = 0; i < 8; ++i) EXPECT_EQ(got[d][i], (1 - d) * 100 + i) << "device " << d;
      }
    }
  }
}

// Two functions on device 0 take from one semaphore, round after round, as
// device 1 hands out two units a round: every unit is taken once (the
// semaphores end at zero, else the launch would fail) and each function
// finishes its rounds.
TEST(MpmdCoresTest, TwoFunctionsTakeFromOneSemaphoreWithoutLosingUnits) {
  constexpr int kRounds = 300;
  Runtime rt(2);
  KernelSpec spec("shared_semaphore");
  const Semaphore credit = spec.semaphore(), done = spec.semaphore();
  std::atomic<int> taken{0};
  auto taker = [&](KernelContext& k) {
    const int dealer = k.logical_id(2, 0);
    for (int r = 0; r < kRounds; ++r) {
      k.semaphore_wait(credit);
      taken.fetch_add(1);
      k.semaphore_signal(done, 1, dealer);
    }
  };
  mpmd_map(rt,
           {{line_mesh("a", {0}), taker},
            {line_mesh("b", {0}), taker},
            {line_mesh("dealer", {1}),
             [&](KernelContext& k) {
               for (int r = 0; r < kRounds; ++r) {
                 k.semaphore_signal(credit, 2, k.logical_id(0, 0));
                 k.semaphore_wait(done, 2);
               }
             }}},
           spec);
  EXPECT_EQ(taken.load(), 2 * kRounds);

  // One unit for two takers: the other waits forever, and the report names
  // it by its device and core.
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("a", {0}), [&](KernelContext& k) { k.semaphore_wait(credit); }},
                         {line_mesh("b", {0}), [&](KernelContext& k) { k.semaphore_wait(credit); }},
                         {line_mesh("dealer", {1}),
                          [&](KernelContext& k) { k.semaphore_signal(credit, 1, k.logical_id(0, 0)); }}},
                        spec),
               DeadlockError, "to reach 1 (it holds 0)");
  try {
    mpmd_map(rt,
             {{line_mesh("a", {0}), [&](KernelContext& k) { k.semaphore_wait(credit); }},
              {line_mesh("b", {0}), [&](KernelContext& k) { k.semaphore_wait(credit); }}},
             spec);
    ADD_FAILURE() << "expected a DeadlockError";
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Mesh(mpmd=2; devices=[0, 0 core 1])"), std::string::npos) << what;
    EXPECT_NE(what.find("device 0 (core 1): waiting in semaphore_wait"), std::string::npos) << what;
  }
}

// Two functions on device 0 each wait for 64 bytes on one DMA semaphore,
// to which device 1 sends two 64-byte copies, in every copy mode: each wait
// takes its own bytes (which copy brought them is the copy mode's choice),
// so once both waited both copies have landed. Race detection on: the
// waits and the handshake order every access.
TEST(MpmdCoresTest, TwoFunctionsWaitForCopiesOnOneDmaSemaphore) {
  Runtime rt(2);
  KernelSpec spec("two_receivers");
  const BufferRef slots = spec.buffer({2, 16}, DType::kInt32);
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  const Semaphore done = spec.semaphore();
  spec.set_race_detection(true);
  std::vector<int32_t> landed;
  const std::vector<MpmdProgram> programs{
      {line_mesh("a", {0}),
       [&](KernelContext& k) {
         k.make_async_remote_copy(slots.at(0), slots.at(0), send, recv, k.device_id()).wait_recv();
         k.semaphore_wait(done);
         landed = {k.read<int32_t>(slots.at(0))[15], k.read<int32_t>(slots.at(1))[15]};
       }},
      {line_mesh("b", {0}),
       [&](KernelContext& k) {
         k.make_async_remote_copy(slots.at(1), slots.at(1), send, recv, k.device_id()).wait_recv();
         k.semaphore_signal(done, 1);
       }},
      {line_mesh("sender", {1}), [&](KernelContext& k) {
         std::vector<AsyncCopy> copies;
         for (int slot = 0; slot < 2; ++slot) {
           for (int32_t& v : k.write<int32_t>(slots.at(slot))) v = 7 + slot;
           copies.push_back(k.make_async_remote_copy(slots.at(slot), slots.at(slot), send, recv,
                                                     k.logical_id(slot, 0)));
           copies.back().start();
         }
         for (AsyncCopy& copy : copies) copy.wait_send();
       }}};
  for (CopyMode mode : {CopyMode::kEager, CopyMode::kOnWait, CopyMode::kRandom}) {
    for (uint64_t seed : {1, 2, 3, 4}) {
      SCOPED_TRACE("copy mode " + std::to_string(static_cast<int>(mode)) + ", seed " +
                   std::to_string(seed));
      spec.set_copy_mode(mode, seed);
      landed.clear();
      mpmd_map(rt, programs, spec);
      EXPECT_EQ(landed, (std::vector<int32_t>{7, 8}));
    }
  }
}

// The race detector tells the functions of one device apart: a read by one
// of what the other wrote, with no semaphore between, is a race; with the
// writer's signal and the reader's wait between, it is not.
TEST(MpmdCoresTest, RaceDetectionSeesEachFunctionOfADevice) {
  Runtime rt(1);
  KernelSpec spec("racy");
  const BufferRef buf = spec.buffer({4}, DType::kFloat32);
  const Semaphore written = spec.semaphore();
  spec.set_race_detection(true);
  auto writer = [&](KernelContext& k) {
    k.write<float>(buf)[0] = 1;
    k.semaphore_signal(written, 1);
  };
  float seen = 0;
  mpmd_map(rt,
           {{line_mesh("w", {0}), writer},
            {line_mesh("r", {0}),
             [&](KernelContext& k) {
               k.semaphore_wait(written);
               seen = k.read<float>(buf)[0];
             }}},
           spec);
  EXPECT_EQ(seen, 1.0f);
  // A copy to the other function of the device, of a buffer onto itself
  // (one memory), is not a race of the copy with itself.
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  for (CopyMode mode : {CopyMode::kEager, CopyMode::kOnWait, CopyMode::kRandom}) {
    spec.set_copy_mode(mode, 5);
    seen = 0;
    mpmd_map(rt,
             {{line_mesh("w", {0}),
               [&](KernelContext& k) {
                 k.write<float>(buf)[3] = 2;
                 AsyncCopy copy = k.make_async_remote_copy(buf, buf, send, recv, 1);
                 copy.start();
                 copy.wait_send();
               }},
              {line_mesh("r", {0}),
               [&](KernelContext& k) {
                 k.make_async_remote_copy(buf, buf, send, recv, k.device_id()).wait_recv();
                 seen = k.read<float>(buf)[3];
               }}},
             spec);
    EXPECT_EQ(seen, 2.0f) << "copy mode " << static_cast<int>(mode);
  }
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("w", {0}), writer},
                         {line_mesh("r", {0}),
                          [&](KernelContext& k) {
                            k.read<float>(buf);
                            k.semaphore_wait(written);
                          }}},
                        spec),
               DataRaceError, "data race in kernel 'racy' on buffer 0 of device 0");
  try {
    mpmd_map(rt,
             {{line_mesh("w", {0}), writer},
              {line_mesh("r", {0}),
               [&](KernelContext& k) {
                 k.read<float>(buf);
                 k.semaphore_wait(written);
               }}},
             spec);
    ADD_FAILURE() << "expected a DataRaceError";
  } catch (const DataRaceError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("device 0 (mpmd_map program 0)"), std::string::npos) << what;
    EXPECT_NE(what.find("device 0 (mpmd_map program 1)"), std::string::npos) << what;
  }
}

// A function that fails fails the launch with its device and program; the
// other function on its device, waiting forever, is cancelled.
TEST(MpmdCoresTest, AFailingFunctionCancelsTheOtherOnItsDevice) {
  Runtime rt(1);
  KernelSpec spec;
  const Semaphore sem = spec.semaphore();
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("x", {0}), [&](KernelContext& k) { k.semaphore_wait(sem); }},
                         {line_mesh("x", {0}),
                          [](KernelContext&) { throw std::runtime_error("boom"); }}},
                        spec),
               DeviceError, "device 0: mpmd_map program 1: std::runtime_error: boom");
  // A semaphore left non-zero is the device's, named once by its first
  // program.
  KernelSpec leaky("leaky");
  const Semaphore left = leaky.semaphore();
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("x", {0}), [](KernelContext&) {}},
                         {line_mesh("x", {0}), [&](KernelContext& k) { k.semaphore_signal(left, 2); }}},
                        leaky),
               SemaphoreError,
               "device 0: mpmd_map program 0: kernel 'leaky' on Mesh(mpmd=2; devices=[0, 0 core 1]) "
               "exited with semaphores of device 0 not back at 0: semaphore 0 holds 2");
}

// Functions on one device that call different collectives are told apart
// by their cores in the mismatch: "device 0" and "device 0 core 1".
TEST(MpmdCoresTest, AMismatchNamesTheCoresOfADevice) {
  Runtime rt(1);
  KernelSpec outer("outer"), inner("inner");
  EXPECT_ERROR(mpmd_map(rt,
                        {{line_mesh("x", {0}), [](KernelContext&) {}},
                         {line_mesh("x", {0}),
                          [&](KernelContext& k) {
                            run_kernel(k.device(), inner, [](KernelContext&) {});
                          }}},
                        outer),
               CollectiveMismatchError,
               "[devices 0, 0 core 1]: device 0 called run_kernel (exit)() but device 0 core 1 "
               "called run_kernel");
}

// Eight functions on one device, each writing its element of the shared
// buffer; the first reads them all once the seven others signalled.
TEST(MpmdCoresTest, EightFunctionsOnOneDevice) {
  Runtime rt(1);
  KernelSpec spec("eight");
  const BufferRef buf = spec.buffer({8}, DType::kInt32);
  const Semaphore ready = spec.semaphore();
  std::vector<int32_t> all;
  std::vector<MpmdProgram> programs;
  for (int p = 0; p < 8; ++p) {
    programs.push_back({line_mesh("x", {0}), [&, p](KernelContext& k) {
                          k.write<int32_t>(buf)[p] = p + 1;
                          if (p > 0) {
                            k.semaphore_signal(ready, 1);
                            return;
                          }
                          k.semaphore_wait(ready, 7);
                          const auto values = k.read<int32_t>(buf);
                          all.assign(values.begin(), values.end());
                        }});
  }
  mpmd_map(rt, programs, spec);
  EXPECT_EQ(all, (std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

using fully_connected_time::fully_connected;
using fully_connected_time::kAlpha;
using fully_connected_time::kBandwidth;

// Virtual time: a copy from one core of device 0 to another crosses no
// network and moves at the memory bandwidth; the acknowledging signal back
// is free; a copy to device 1 pays the network. Priced as it runs or after
// the launch, alike.
TEST(MpmdCoresTest, CopiesBetweenCoresOfADeviceMoveAtItsMemoryBandwidth) {
  Runtime rt(2);
  KernelSpec spec("timed_cores");
  const BufferRef buf = spec.buffer({512}, DType::kUInt8);
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  const Semaphore ack = spec.semaphore();
  // Program 0 on devices 0, 1 (positions 0, 1); program 1 on device 0
  // (position 2, core 1 of device 0).
  const std::vector<MpmdProgram> programs{
      {line_mesh("x", {0, 1}),
       [&](KernelContext& k) {
         if (k.program_device_id() == 1) {
           k.make_async_remote_copy(buf, buf, send, recv, k.device_id()).wait_recv();
           return;
         }
         k.device().advance(1.0);
         AsyncCopy to_core = k.make_async_remote_copy(buf, buf, send, recv, k.logical_id(1, 0));
         to_core.start();
         to_core.wait_send();
         k.semaphore_wait(ack);
         AsyncCopy to_device = k.make_async_remote_copy(buf, buf, send, recv, 1);
         to_device.start();
         to_device.wait_send();
       }},
      {line_mesh("c", {0}), [&](KernelContext& k) {
         k.make_async_remote_copy(buf, buf, send, recv, k.device_id()).wait_recv();
         k.semaphore_signal(ack, 1, 0);
       }}};
  for (bool congestion_aware : {false, true}) {
    SCOPED_TRACE(congestion_aware ? "congestion-aware" : "congestion-unaware");
    LaunchRecord record;
    mpmd_map(rt, programs, spec,
             {.time = fully_connected(2, congestion_aware, {1e9, 256}), .record = &record});
    const double landed = 1.0 + 512.0 / 256;  // at the memory bandwidth
    ASSERT_EQ(record.end_times.size(), 3u);
    EXPECT_DOUBLE_EQ(record.end_times[2], landed);
    EXPECT_DOUBLE_EQ(record.end_times[0], landed);  // the signal back costs nothing
    EXPECT_DOUBLE_EQ(record.end_times[1], landed + kAlpha + 512 / kBandwidth);
    // Without a memory bandwidth the copy between cores is free.
    mpmd_map(rt, programs, spec,
             {.time = fully_connected(2, congestion_aware, {}), .record = &record});
    EXPECT_DOUBLE_EQ(record.end_times[2], 1.0);
  }
  // A device's functions share its place in the network.
  auto split = fully_connected(2, false, {});
  split->nodes = {0, 1, 1};
  EXPECT_ERROR(mpmd_map(rt, programs, spec, {.time = split}), InvalidArgumentError,
               "mesh positions 0 and 2 run on device 0 but are placed on nodes 0 and 1; a device's "
               "functions share one node");
}

// Two functions take one unit each of one signal: both clocks move to its
// arrival (each prices what it takes). Device 1 sits on node 1 by default
// although device 0 has two positions before it.
TEST(MpmdCoresTest, EachFunctionTakingPartOfASignalReceivesItsArrival) {
  Runtime rt(2);
  KernelSpec spec("split_signal");
  const Semaphore credit = spec.semaphore();
  auto taker = [&](KernelContext& k) { k.semaphore_wait(credit); };
  const std::vector<MpmdProgram> programs{
      {line_mesh("a", {0}), taker},
      {line_mesh("b", {0, 1}), [&](KernelContext& k) {
         if (k.program_device_id() == 0) {
           taker(k);
           return;
         }
         k.device().advance(10.0);
         k.semaphore_signal(credit, 2, k.logical_id(0, 0));
       }}};
  for (bool congestion_aware : {false, true}) {
    SCOPED_TRACE(congestion_aware ? "congestion-aware" : "congestion-unaware");
    LaunchRecord record;
    mpmd_map(rt, programs, spec,
             {.time = fully_connected(2, congestion_aware, {}), .record = &record});
    EXPECT_EQ(record.end_times, (std::vector<double>{10 + kAlpha, 10 + kAlpha, 10.0}));
  }
}

// Traces: each function of a device records on a track of its own, and the
// copy from one core to the other is a flow between them.
TEST(MpmdCoresTest, EachCoreHasItsOwnTraceTrack) {
  Runtime rt(1);
  KernelSpec spec("traced_cores");
  const BufferRef buf = spec.buffer({64}, DType::kUInt8);
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  LaunchRecord record;
  mpmd_map(rt,
           {{line_mesh("x", {0}),
             [&](KernelContext& k) {
               AsyncCopy copy = k.make_async_remote_copy(buf, buf, send, recv, 1);
               copy.start();
               copy.wait_send();
             }},
            {line_mesh("x", {0}),
             [&](KernelContext& k) {
               k.make_async_remote_copy(buf, buf, send, recv, k.device_id()).wait_recv();
             }}},
           spec, {.record = &record, .trace = true});
  const auto starts = record.events_of(0, TraceKind::kTransfer, "AsyncCopy::start");
  const auto arrivals = record.events_of(1, TraceKind::kTransfer, "AsyncCopy::wait_recv");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(arrivals.size(), 1u);
  EXPECT_EQ(starts[0]->device, 0);
  EXPECT_EQ(starts[0]->core, 0);
  EXPECT_EQ(starts[0]->to, 0);
  EXPECT_EQ(arrivals[0]->device, 0);
  EXPECT_EQ(arrivals[0]->core, 1);
  EXPECT_EQ(arrivals[0]->from, 0);
  EXPECT_NE(starts[0]->flow_out, 0u);
  EXPECT_EQ(arrivals[0]->flow_in, starts[0]->flow_out);
  const std::string json = chrome_trace_json(record);
  EXPECT_NE(json.find("\"device 0 (position 0)\""), std::string::npos);
  EXPECT_NE(json.find("\"device 0 core 1 (position 1)\""), std::string::npos);
}

}  // namespace
}  // namespace meshsim::mpmd_cores_test
