// Kernels with virtual time and traces: a remote DMA is priced by the
// network model and arrives at its receiver's wait, a semaphore signal to
// another device costs one message, a local DMA moves at the device's
// memory bandwidth, compute between a start and its wait overlaps the
// transfer; each checked against the closed form of a fully connected
// topology (alpha seconds per message, beta seconds per byte). The times
// are the same in every copy mode and execution mode, and with a network
// priced after the launch. Traced kernels record their operations with
// flows from each copy's start to the wait that receives it.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
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
#include "support/fully_connected_time.h"

namespace meshsim::kernel_time_test {
namespace {

using fully_connected_time::fully_connected;
using fully_connected_time::kAlpha;
using fully_connected_time::kBandwidth;
using fully_connected_time::kBeta;

// Runs `body` as a kernel declared by `spec` on p devices with virtual time
// and returns each device's final clock.
std::vector<double> run_timed(Runtime& rt, int p, const KernelSpec& spec,
                              const std::function<void(KernelContext&)>& body,
                              std::shared_ptr<const VirtualTime> time) {
  LaunchRecord record;
  rt.launch(Mesh::make({{"x", p}}), [&](DeviceContext& ctx) { run_kernel(ctx, spec, body); },
            {.time = std::move(time), .record = &record});
  return record.end_times;
}

// Device 0 computes 2 s, starts a 512-byte copy to device 1, computes
// `compute` s more and waits for the send; device 1 waits for the copy and
// signals device 0, which waits for that signal.
struct CopyThenAcknowledge {
  KernelSpec spec{"copy_then_acknowledge"};
  BufferRef buf = spec.buffer({512}, DType::kUInt8);
  DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  Semaphore ack = spec.semaphore();

  void operator()(KernelContext& k, double compute) const {
    AsyncCopy copy = k.make_async_remote_copy(buf, buf, send, recv, 1);
    if (k.device_id() == 0) {
      k.device().advance(2.0);
      copy.start();
      k.device().advance(compute);
      copy.wait_send();
      k.semaphore_wait(ack);
    } else {
      copy.wait_recv();
      k.semaphore_signal(ack, 1, 0);
    }
  }
};

TEST(KernelVirtualTime, ACopyIsPricedByTheNetworkAndOverlapsCompute) {
  Runtime rt(2);
  const CopyThenAcknowledge kernel;
  const double arrival = 2.0 + kAlpha + 512 * kBeta;  // 2.75 s
  for (bool congestion_aware : {false, true}) {
    for (double compute : {0.5, 3.0}) {
      SCOPED_TRACE((congestion_aware ? "congestion-aware, compute " : "congestion-unaware, compute ") +
                   std::to_string(compute));
      const std::vector<double> times =
          run_timed(rt, 2, kernel.spec, [&](KernelContext& k) { kernel(k, compute); },
                    fully_connected(2, congestion_aware));
      ASSERT_EQ(times.size(), 2u);
      // The send costs its issuer nothing; the acknowledgement one message.
      EXPECT_DOUBLE_EQ(times[0], std::max(2.0 + compute, arrival + kAlpha));
      EXPECT_DOUBLE_EQ(times[1], arrival);
    }
  }
}

TEST(KernelVirtualTime, ALocalCopyMovesAtTheMemoryBandwidth) {
  Runtime rt(1);
  KernelSpec spec;
  const BufferRef a = spec.buffer({512}, DType::kUInt8), b = spec.buffer({512}, DType::kUInt8);
  const DmaSemaphore sem = spec.dma_semaphore();
  auto body = [&](KernelContext& k) {
    k.device().advance(1.0);
    AsyncCopy copy = k.make_async_copy(a, b, sem);
    copy.start();
    copy.wait();
  };
  for (bool congestion_aware : {false, true}) {
    EXPECT_EQ(run_timed(rt, 1, spec, body, fully_connected(1, congestion_aware, {1e9, 256})),
              std::vector<double>{1.0 + 512.0 / 256});
    // Without a memory bandwidth it is free.
    EXPECT_EQ(run_timed(rt, 1, spec, body, fully_connected(1, congestion_aware)),
              std::vector<double>{1.0});
  }
}

// A ring all-gather by remote copies with uneven compute per device and
// step: every device's clock is a function of the program alone, priced as
// it runs or after the launch (each link carries one copy at a time, so
// congestion changes nothing).
TEST(KernelVirtualTime, TimesAreTheSameInEveryCopyModeAndExecutionMode) {
  constexpr int kDevices = 4;
  KernelSpec spec("timed_ring");
  const BufferRef slots = spec.buffer({kDevices, 64}, DType::kFloat32);
  const DmaSemaphore send = spec.dma_semaphore(), recv = spec.dma_semaphore();
  const Semaphore ready = spec.semaphore();
  auto body = [&](KernelContext& k) {
    const int me = k.device_id(), right = (me + 1) % kDevices, left = (me + kDevices - 1) % kDevices;
    for (int step = 0; step + 1 < kDevices; ++step) {
      const int slot = (me + kDevices - step) % kDevices;
      // The right neighbour is done reading what we sent it last step.
      if (step > 0) k.semaphore_wait(ready);
      AsyncCopy copy = k.make_async_remote_copy(slots.at(slot), slots.at(slot), send, recv, right);
      copy.start();
      k.device().advance(0.2 * (me + 1) * (step + 1));
      copy.wait_send();
      copy.wait_recv();
      if (step + 2 < kDevices) k.semaphore_signal(ready, 1, left);
    }
  };
  std::vector<double> first;
  for (ExecutionMode mode : {ExecutionMode::kThreads, ExecutionMode::kFibers}) {
    Runtime rt(kDevices, RuntimeOptions{.execution = mode});
    for (CopyMode copies : {CopyMode::kEager, CopyMode::kOnWait, CopyMode::kRandom}) {
      for (uint64_t seed : {1, 2}) {
        for (bool congestion_aware : {false, true}) {
          spec.set_copy_mode(copies, seed);
          const std::vector<double> times =
              run_timed(rt, kDevices, spec, body, fully_connected(kDevices, congestion_aware));
          if (first.empty()) first = times;
          EXPECT_EQ(times, first) << to_string(mode) << ", copy mode " << static_cast<int>(copies)
                                  << ", seed " << seed << ", congestion-aware " << congestion_aware;
        }
      }
    }
  }
  // Step by step, each device's clock becomes the latest of: the ready
  // signal from its right neighbour (sent after that one's previous
  // receive, plus alpha), its compute after the start, and its left
  // neighbour's copy (departed at that one's start, plus alpha + 256 beta).
  std::vector<double> want(kDevices, 0.0), ready_sent;
  for (int step = 0; step + 1 < kDevices; ++step) {
    if (step > 0) {
      for (int d = 0; d < kDevices; ++d) want[d] = std::max(want[d], ready_sent[(d + 1) % kDevices] + kAlpha);
    }
    const std::vector<double> departure = want;
    for (int d = 0; d < kDevices; ++d) {
      want[d] = std::max(departure[d] + 0.2 * (d + 1) * (step + 1),
                         departure[(d + kDevices - 1) % kDevices] + kAlpha + 256 * kBeta);
    }
    ready_sent = want;
  }
  ASSERT_EQ(first.size(), static_cast<size_t>(kDevices));
  for (int d = 0; d < kDevices; ++d) EXPECT_DOUBLE_EQ(first[d], want[d]) << "device " << d;
  EXPECT_DOUBLE_EQ(want[3], 4.8);
}

TEST(KernelVirtualTime, MpmdProgramsKeepTimeToo) {
  Runtime rt(2);
  const CopyThenAcknowledge kernel;
  LaunchRecord record;
  LaunchOptions options{.time = fully_connected(2), .record = &record};
  mpmd_map(rt,
           {{Mesh(AbstractMesh({{"p", 1}}), {0}), [&](KernelContext& k) { kernel(k, 0.5); }},
            {Mesh(AbstractMesh({{"c", 1}}), {1}), [&](KernelContext& k) { kernel(k, 0.5); }}},
           kernel.spec, options);
  const double arrival = 2.0 + kAlpha + 512 * kBeta;
  EXPECT_EQ(record.end_times, (std::vector<double>{arrival + kAlpha, arrival}));
}

const TraceEvent* only_event(const LaunchRecord& record, int position, const std::string& op) {
  const std::vector<const TraceEvent*> events = record.events_of(position, TraceKind::kTransfer, op);
  EXPECT_EQ(events.size(), 1u) << op << " on position " << position;
  return events.empty() ? nullptr : events.front();
}

TEST(KernelTrace, CopiesAndSignalsAreTransfersWithFlows) {
  Runtime rt(2);
  const CopyThenAcknowledge kernel;
  LaunchRecord record;
  rt.launch(Mesh(AbstractMesh({{"x", 2}}), {0, 1}),
            [&](DeviceContext& ctx) {
              run_kernel(ctx, kernel.spec, [&](KernelContext& k) { kernel(k, 0.5); });
            },
            {.time = fully_connected(2), .record = &record, .trace = true});
  const TraceEvent* start = only_event(record, 0, "AsyncCopy::start");
  const TraceEvent* arrived = only_event(record, 1, "AsyncCopy::wait_recv");
  const TraceEvent* signal = only_event(record, 1, "semaphore_signal");
  const TraceEvent* ack = only_event(record, 0, "semaphore_wait");
  ASSERT_TRUE(start && arrived && signal && ack);
  EXPECT_EQ(start->to, 1);
  EXPECT_EQ(start->bytes, 512);
  EXPECT_NE(start->flow_out, 0u);
  EXPECT_EQ(arrived->from, 0);
  EXPECT_EQ(arrived->recv_bytes, 512);
  EXPECT_EQ(arrived->flow_in, start->flow_out);
  EXPECT_DOUBLE_EQ(arrived->virtual_end, 2.0 + kAlpha + 512 * kBeta);
  EXPECT_EQ(signal->to, 0);
  EXPECT_EQ(ack->from, 1);
  EXPECT_EQ(ack->flow_in, signal->flow_out);
  EXPECT_NE(ack->flow_in, 0u);
  // The send's completion is local: no flow.
  const TraceEvent* sent = only_event(record, 0, "AsyncCopy::wait_send");
  ASSERT_NE(sent, nullptr);
  EXPECT_EQ(sent->flow_in, 0u);
  EXPECT_EQ(sent->from, -1);
  // Perfetto draws the copy and the acknowledgement as arrows.
  const std::string json = chrome_trace_json(record);
  EXPECT_NE(json.find("\"AsyncCopy::start\""), std::string::npos);
  EXPECT_NE(json.find("flow.virtual"), std::string::npos);
}

}  // namespace
}  // namespace meshsim::kernel_time_test
