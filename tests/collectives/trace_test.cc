// Launch traces (LaunchOptions::trace): the per-launch record a test asserts
// on, the events of algorithms' transfers and their send -> receive flows,
// virtual times in events against closed forms, async starts, the capacity
// limit, errors, and the Chrome trace JSON written from a record.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "meshsim/collectives/all_gather.h"
#include "meshsim/collectives/async.h"
#include "meshsim/collectives/barrier.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/collectives/reductions.h"
#include "meshsim/collectives/send_recv.h"
#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/time/congestion_unaware_model.h"
#include "meshsim/runtime/trace/chrome_trace.h"
#include "support/fully_connected_time.h"
#include "support/expect_error.h"

namespace meshsim::trace_test {
namespace {

using fully_connected_time::fully_connected;
using fully_connected_time::kAlpha;
using fully_connected_time::kBandwidth;
using fully_connected_time::kBeta;

LaunchRecord traced(Runtime& runtime, const Mesh& mesh,
                    const std::function<void(DeviceContext&)>& body,
                    std::shared_ptr<const VirtualTime> time = nullptr) {
  LaunchRecord record;
  runtime.launch(mesh, body, {.time = std::move(time), .record = &record, .trace = true});
  return record;
}

TEST(Trace, RecordsWhatCommunicated) {
  // "Exactly two all-reduces over 'model', 3 MiB each", on a (data=2, model=4) mesh.
  Runtime runtime(8);
  const int64_t count = 3 * (1 << 20) / 4;  // float32 elements in 3 MiB
  const LaunchRecord record = traced(runtime, Mesh::make({{"data", 2}, {"model", 4}}),
                                     [&](DeviceContext& ctx) {
                                       Array x = Array::full({count}, DType::kFloat32, 1);
                                       x = psum(ctx, x, "model");
                                       x = psum(ctx, x, "model");
                                       ASSERT_EQ(x.at<float>({0}), 16.0f);
                                     });
  EXPECT_EQ(record.events.size(), 16u);
  EXPECT_EQ(record.events_dropped, 0u);
  EXPECT_TRUE(record.end_times.empty()) << "no virtual time was asked for";
  for (int position = 0; position < 8; ++position) {
    const auto psums = record.events_of(position, TraceKind::kCollective, "psum");
    ASSERT_EQ(psums.size(), 2u) << "position " << position;
    for (const TraceEvent* e : psums) {
      EXPECT_EQ(e->device, position);
      EXPECT_EQ(e->axes, "model");
      EXPECT_EQ(e->group_size, 4);
      EXPECT_EQ(e->bytes, 3 << 20);
      EXPECT_EQ(e->algorithm, "direct");
      EXPECT_EQ(e->chosen_by, "default");
      EXPECT_EQ(e->depth, 0);
      EXPECT_FALSE(e->async);
      EXPECT_LE(e->wall_start_ns, e->wall_end_ns);
      EXPECT_EQ(e->virtual_start, 0.0);
      EXPECT_EQ(e->virtual_end, 0.0);
    }
    EXPECT_LE(psums[0]->wall_end_ns, psums[1]->wall_start_ns) << "in program order";
    EXPECT_TRUE(record.events_of(position, TraceKind::kTransfer).empty())
        << "direct moves no point-to-point transfer";
  }
}

TEST(Trace, UntracedLaunchRecordsNoEvents) {
  Runtime runtime(2);
  LaunchRecord record;
  record.events.resize(3);  // cleared when the launch begins
  runtime.launch(
      Mesh::make({{"x", 2}}),
      [](DeviceContext& ctx) { psum(ctx, Array::full({4}, DType::kFloat32, 1), "x"); },
      {.record = &record});
  EXPECT_TRUE(record.events.empty());
}

// Each device exports its own events as its part ends: a traced launch
// after a longer one, or after an untraced one, holds its own events only.
TEST(Trace, EachTracedLaunchRecordsItsOwnEvents) {
  Runtime runtime(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  const auto psums = [&](int calls, bool trace, LaunchRecord& record) {
    runtime.launch(
        mesh,
        [calls](DeviceContext& ctx) {
          for (int i = 0; i < calls; ++i) psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
        },
        {.record = &record, .trace = trace});
  };
  LaunchRecord record;
  psums(3, true, record);
  EXPECT_EQ(record.events.size(), 6u);
  psums(1, true, record);
  EXPECT_EQ(record.events.size(), 2u);
  psums(2, false, record);
  EXPECT_TRUE(record.events.empty());
  psums(2, true, record);
  ASSERT_EQ(record.events.size(), 4u);
  EXPECT_EQ(record.events_of(0, TraceKind::kCollective, "psum").size(), 2u);
  EXPECT_EQ(record.events_of(1, TraceKind::kCollective, "psum").size(), 2u);
}

// A device keeps the records of its first DeviceContext::kMaxCollectiveRecords
// collectives and counts the rest as dropped, traced or not; a traced
// launch's events still name the algorithm and what chose it past that
// bound.
TEST(Trace, RecordsPastTheirBoundAreCountedAndStillTraced) {
  Runtime runtime(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  constexpr size_t kCalls = DeviceContext::kMaxCollectiveRecords + 5;
  for (const bool trace : {false, true}) {
    std::vector<size_t> kept(2), dropped(2);
    std::vector<std::string> first(2), last(2);
    LaunchRecord record;
    runtime.launch(
        mesh,
        [&](DeviceContext& ctx) {
          const Array x = Array::full({4}, DType::kFloat32, 1);
          for (size_t i = 0; i + 1 < kCalls; ++i) psum(ctx, x, "x");
          psum(ctx, x, "x", {}, "ring");
          const auto records = ctx.collective_records();
          const int p = ctx.position();
          kept[p] = records.size();
          dropped[p] = ctx.dropped_collective_records();
          if (records.empty()) return;  // failed above, through `kept`
          const auto describe = [](const CollectiveRecord& r) {
            return std::string(r.collective) + ":" + std::string(r.algorithm) + ":" +
                   std::string(r.chosen_by);
          };
          first[p] = describe(records.front());
          last[p] = describe(records.back());
        },
        {.record = &record, .trace = trace});
    for (int p = 0; p < 2; ++p) {
      EXPECT_EQ(kept[p], DeviceContext::kMaxCollectiveRecords) << trace;
      EXPECT_EQ(dropped[p], 5u) << trace;
      EXPECT_EQ(first[p], "psum:direct:default") << trace;
      EXPECT_EQ(last[p], "psum:direct:default") << trace;  // the ring call was dropped
    }
    const auto psums = record.events_of(1, TraceKind::kCollective, "psum");
    ASSERT_EQ(psums.size(), trace ? kCalls : 0u);
    if (trace) {
      EXPECT_EQ(psums.front()->algorithm, "direct");
      EXPECT_EQ(psums.back()->algorithm, "ring");
      EXPECT_EQ(psums.back()->chosen_by, "call");
    }
  }
}

// Every flow leaves one transfer and enters one other, on the devices the
// two events name; returns the number of flows.
size_t expect_flows_pair_up(const LaunchRecord& record) {
  std::map<uint64_t, const TraceEvent*> out, in;
  for (const TraceEvent& e : record.events) {
    if (e.flow_out != 0) EXPECT_TRUE(out.emplace(e.flow_out, &e).second) << "flow out twice";
    if (e.flow_in != 0) EXPECT_TRUE(in.emplace(e.flow_in, &e).second) << "flow in twice";
  }
  EXPECT_EQ(out.size(), in.size());
  for (const auto& [flow, send] : out) {
    const auto found = in.find(flow);
    if (found == in.end()) {
      ADD_FAILURE() << "flow " << flow << " from device " << send->device << " never received";
      continue;
    }
    const TraceEvent* recv = found->second;
    EXPECT_EQ(send->to, recv->device);
    EXPECT_EQ(recv->from, send->device);
    EXPECT_EQ(send->bytes, recv->recv_bytes);
  }
  return out.size();
}

TEST(Trace, RingAllReduceTransfersNestInsideTheirCollective) {
  const int p = 4;
  const int64_t count = 256 * p;
  const int64_t n = 4 * count;  // bytes per member
  Runtime runtime(p);
  const LaunchRecord record = traced(runtime, Mesh::make({{"x", p}}), [&](DeviceContext& ctx) {
    psum(ctx, Array::full({count}, DType::kFloat32, 1), "x", {}, "ring");
  });
  int64_t sent = 0;
  for (int position = 0; position < p; ++position) {
    const auto psums = record.events_of(position, TraceKind::kCollective, "psum");
    ASSERT_EQ(psums.size(), 1u);
    EXPECT_EQ(psums[0]->algorithm, "ring");
    EXPECT_EQ(psums[0]->chosen_by, "call");
    const auto transfers = record.events_of(position, TraceKind::kTransfer);
    ASSERT_FALSE(transfers.empty());
    for (const TraceEvent* t : transfers) {
      EXPECT_EQ(t->depth, 1) << t->op;
      EXPECT_EQ(t->axes, "x");
      EXPECT_GE(t->wall_start_ns, psums[0]->wall_start_ns);
      EXPECT_LE(t->wall_end_ns, psums[0]->wall_end_ns);
      sent += t->bytes;
    }
  }
  // A ring all-reduce sends 2 (p - 1) blocks of n / p from every member.
  EXPECT_EQ(sent, 2 * (p - 1) * n);
  EXPECT_EQ(expect_flows_pair_up(record), static_cast<size_t>(2 * (p - 1) * p));
}

TEST(Trace, VirtualTimesOfEventsFollowTheModel) {
  const int p = 4;
  const int64_t count = 256 * p;
  const double n = 4.0 * count;
  Runtime runtime(p);
  const LaunchRecord record = traced(
      runtime, Mesh::make({{"x", p}}),
      [&](DeviceContext& ctx) {
        ctx.advance(1.0);
        psum(ctx, Array::full({count}, DType::kFloat32, 1), "x", {}, "ring");
      },
      fully_connected(p));
  const double ring = 2 * (p - 1) * (kAlpha + n / p * kBeta);
  for (int position = 0; position < p; ++position) {
    const auto advance = record.events_of(position, TraceKind::kCompute, "advance");
    ASSERT_EQ(advance.size(), 1u);
    EXPECT_EQ(advance[0]->virtual_start, 0.0);
    EXPECT_EQ(advance[0]->virtual_end, 1.0);
    const auto psums = record.events_of(position, TraceKind::kCollective, "psum");
    ASSERT_EQ(psums.size(), 1u);
    EXPECT_EQ(psums[0]->virtual_start, 1.0);
    EXPECT_DOUBLE_EQ(psums[0]->virtual_end, 1.0 + ring);
    EXPECT_EQ(psums[0]->virtual_end, record.end_times[position]);
  }
  // Each receive ends one hop (alpha + bytes beta) after its send began, or
  // later if the receiver was behind.
  std::map<uint64_t, const TraceEvent*> sends;
  for (const TraceEvent& e : record.events) {
    if (e.flow_out != 0) sends[e.flow_out] = &e;
  }
  for (const TraceEvent& e : record.events) {
    if (e.flow_in == 0) continue;
    const TraceEvent& send = *sends.at(e.flow_in);
    EXPECT_GE(e.virtual_end, send.virtual_start + kAlpha + e.recv_bytes * kBeta);
  }
}

TEST(Trace, PsendPrecvAreOneFlow) {
  Runtime runtime(2);
  const LaunchRecord record = traced(
      runtime, Mesh::make({{"x", 2}}),
      [](DeviceContext& ctx) {
        if (ctx.position() == 0) {
          psend(ctx, Array::full({64}, DType::kFloat32, 1), "x", {{{0, 1}}});
        } else {
          ctx.advance(2.0);
          precv(ctx, {}, {64}, DType::kFloat32, "x", {{{0, 1}}});
        }
      },
      fully_connected(2));
  const auto sends = record.events_of(0, TraceKind::kTransfer, "psend");
  const auto recvs = record.events_of(1, TraceKind::kTransfer, "precv");
  ASSERT_EQ(sends.size(), 1u);
  ASSERT_EQ(recvs.size(), 1u);
  EXPECT_EQ(sends[0]->to, 1);
  EXPECT_EQ(sends[0]->bytes, 256);
  EXPECT_EQ(recvs[0]->from, 0);
  EXPECT_NE(sends[0]->flow_out, 0u);
  EXPECT_EQ(sends[0]->flow_out, recvs[0]->flow_in);
  // The message left at 0 and arrived at alpha + 256 beta < 2: no wait.
  EXPECT_EQ(recvs[0]->virtual_start, 2.0);
  EXPECT_EQ(recvs[0]->virtual_end, 2.0);
  EXPECT_EQ(expect_flows_pair_up(record), 1u);
}

TEST(Trace, AsyncStartsAreMarkedAndDoneWaitsAreRecorded) {
  // ppermute_start, then 0.1 s of compute, then done: the transfer (alpha +
  // 1 KiB beta = 1.25 s) outlasts the compute, so done() waits 1.15 s.
  Runtime runtime(2);
  const LaunchRecord record = traced(
      runtime, Mesh::make({{"x", 2}}),
      [](DeviceContext& ctx) {
        Pending h = ppermute_start(ctx, Array::full({256}, DType::kFloat32, 1), "x",
                                   {{0, 1}, {1, 0}});
        ctx.advance(0.125);
        h.done();
      },
      fully_connected(2));
  const double transfer = kAlpha + 1024 * kBeta;
  for (int position = 0; position < 2; ++position) {
    const auto starts = record.events_of(position, TraceKind::kCollective, "ppermute");
    ASSERT_EQ(starts.size(), 1u);
    EXPECT_TRUE(starts[0]->async);
    EXPECT_EQ(starts[0]->bytes, 1024);
    EXPECT_EQ(starts[0]->virtual_start, 0.0);
    EXPECT_DOUBLE_EQ(starts[0]->virtual_end, transfer);
    const auto compute = record.events_of(position, TraceKind::kCompute, "advance");
    ASSERT_EQ(compute.size(), 1u);
    EXPECT_FALSE(compute[0]->async);
    const auto done = record.events_of(position, TraceKind::kWait, "ppermute_done");
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0]->virtual_start, 0.125);
    EXPECT_DOUBLE_EQ(done[0]->virtual_end, transfer);
  }
}

TEST(Trace, CapacityDropsAndCounts) {
  Runtime runtime(2);
  LaunchRecord record;
  runtime.launch(
      Mesh::make({{"x", 2}}),
      [](DeviceContext& ctx) {
        for (int i = 0; i < 5; ++i) psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
      },
      {.record = &record, .trace = true, .trace_capacity = 3});
  EXPECT_EQ(record.events.size(), 6u);
  EXPECT_EQ(record.events_dropped, 4u);
}

TEST(Trace, CapacityLeavesNoArrowWithoutItsSend) {
  // Each device keeps its first 3 events: some receives are kept whose sends
  // were dropped; they must not claim a flow.
  Runtime runtime(4);
  LaunchRecord record;
  runtime.launch(
      Mesh::make({{"x", 4}}),
      [](DeviceContext& ctx) {
        ctx.advance(0);
        psum(ctx, Array::full({1024}, DType::kFloat32, 1), "x", {}, "ring");
      },
      {.record = &record, .trace = true, .trace_capacity = 3});
  std::set<uint64_t> sent;
  for (const TraceEvent& e : record.events) {
    if (e.flow_out != 0) sent.insert(e.flow_out);
  }
  EXPECT_FALSE(sent.empty());
  for (const TraceEvent& e : record.events) {
    if (e.flow_in != 0) EXPECT_TRUE(sent.count(e.flow_in)) << "device " << e.device << " " << e.op;
  }
}

TEST(Trace, BarrierMovesNoBytesAndPsendWorksWithoutVirtualTime) {
  Runtime runtime(2);
  const LaunchRecord record = traced(runtime, Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    barrier(ctx, "x");
    if (ctx.position() == 0) {
      psend(ctx, Array::full({8}, DType::kInt32, 1), "x", {{{0, 1}}});
    } else {
      precv(ctx, {}, {8}, DType::kInt32, "x", {{{0, 1}}});
    }
  });
  for (int position = 0; position < 2; ++position) {
    const auto barriers = record.events_of(position, TraceKind::kCollective, "barrier");
    ASSERT_EQ(barriers.size(), 1u);
    EXPECT_EQ(barriers[0]->bytes, 0);
  }
  EXPECT_EQ(expect_flows_pair_up(record), 1u);
}

TEST(Trace, ACaughtErrorInsideACollectiveLeavesTheNextEventAtTopLevel) {
  Runtime runtime(2);
  const LaunchRecord record = traced(runtime, Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    const Array x = Array::full({4}, DType::kFloat32, 1);
    EXPECT_THROW(psum(ctx, x, "x", {}, "no_such_algorithm"), UnknownAlgorithmError);
    psum(ctx, x, "x");
  });
  for (int position = 0; position < 2; ++position) {
    const auto psums = record.events_of(position, TraceKind::kCollective, "psum");
    ASSERT_EQ(psums.size(), 2u);
    EXPECT_EQ(psums[1]->depth, 0);
    EXPECT_EQ(psums[1]->algorithm, "direct");
    EXPECT_LE(psums[0]->wall_start_ns, psums[0]->wall_end_ns);
  }
}

TEST(Trace, BadOptionsAreErrors) {
  Runtime runtime(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  EXPECT_ERROR(runtime.launch(mesh, [](DeviceContext&) {}, {.trace = true}),
               InvalidArgumentError, "LaunchOptions::trace needs LaunchOptions::record");
  // A refused launch leaves the record empty, not holding the last one's events.
  LaunchRecord record;
  runtime.launch(
      mesh, [](DeviceContext& ctx) { psum(ctx, Array::zeros({1}, DType::kFloat32), "x"); },
      {.record = &record, .trace = true});
  ASSERT_FALSE(record.events.empty());
  EXPECT_ERROR(runtime.launch(mesh, [](DeviceContext&) {},
                              {.record = &record, .trace = true, .trace_capacity = 0}),
               InvalidArgumentError, "trace_capacity must be at least 1");
  EXPECT_TRUE(record.events.empty());
}

TEST(Trace, AFailedLaunchKeepsItsEvents) {
  Runtime runtime(2);
  LaunchRecord record;
  EXPECT_ERROR(runtime.launch(
                   Mesh::make({{"x", 2}}),
                   [](DeviceContext& ctx) {
                     psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
                     if (ctx.position() == 1) throw InvalidArgumentError("device code failed");
                   },
                   {.record = &record, .trace = true}),
               InvalidArgumentError, "device code failed");
  EXPECT_EQ(record.events_of(0, TraceKind::kCollective, "psum").size(), 1u);
  EXPECT_EQ(record.events_of(1, TraceKind::kCollective, "psum").size(), 1u);
}

TEST(Trace, VirtualEventTimesAreTheSameInBothExecutionModes) {
  using Key = std::tuple<int, std::string, int, double, double>;
  const auto run = [](ExecutionMode mode) {
    Runtime runtime(8, RuntimeOptions{.execution = mode});
    const LaunchRecord record = traced(
        runtime, Mesh::make({{"x", 8}}),
        [](DeviceContext& ctx) {
          ctx.advance(0.5 * ctx.position());
          psum(ctx, Array::full({512}, DType::kFloat32, 1), "x", {}, "recursive_doubling");
          all_gather(ctx, Array::full({64}, DType::kFloat32, 1), "x", {.algorithm = "ring"});
        },
        fully_connected(8));
    std::vector<Key> keys;
    for (const TraceEvent& e : record.events) {
      keys.emplace_back(e.device, e.op, e.depth, e.virtual_start, e.virtual_end);
    }
    return keys;
  };
  const std::vector<Key> threads = run(ExecutionMode::kThreads);
  EXPECT_FALSE(threads.empty());
  EXPECT_EQ(threads, run(ExecutionMode::kFibers));
  EXPECT_EQ(threads, run(ExecutionMode::kThreads)) << "and across runs";
}

TEST(ChromeTrace, ParsesAndMatchesTheRecord) {
  const int p = 4;
  Runtime runtime(p);
  const LaunchRecord record = traced(
      runtime, Mesh::make({{"x", p}}),
      [](DeviceContext& ctx) {
        psum(ctx, Array::full({1024}, DType::kFloat32, 1), "x", {}, "ring");
        ctx.advance(0.5);
      },
      fully_connected(p));
  const auto doc = nlohmann::json::parse(chrome_trace_json(record));
  std::map<std::string, int> phases;
  std::set<std::string> process_names;
  std::map<std::pair<std::string, int64_t>, int> flow_starts, flow_ends;  // (cat, id)
  std::map<int, int> slices_per_pid;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    ++phases[ph];
    if (ph == "M" && e.at("name") == "process_name") process_names.insert(e.at("args").at("name"));
    if (ph == "X") {
      ++slices_per_pid[e.at("pid").get<int>()];
      EXPECT_GE(e.at("dur").get<double>(), 0.0);
    }
    if (ph == "s") ++flow_starts[{e.at("cat"), e.at("id").get<int64_t>()}];
    if (ph == "f") {
      ++flow_ends[{e.at("cat"), e.at("id").get<int64_t>()}];
      EXPECT_EQ(e.at("bp"), "e");
    }
  }
  EXPECT_EQ(process_names, (std::set<std::string>{"virtual time", "wall time"}));
  // Every event is one slice in each view.
  EXPECT_EQ(slices_per_pid[1], static_cast<int>(record.events.size()));
  EXPECT_EQ(slices_per_pid[2], static_cast<int>(record.events.size()));
  EXPECT_EQ(flow_starts.size(), 2 * static_cast<size_t>(2 * (p - 1) * p));
  EXPECT_EQ(flow_starts, flow_ends) << "every arrow has both ends";
  // The ring psum's slice in virtual time: 2 (p - 1) hops of 1 KiB.
  const double ring_us = 2 * (p - 1) * (kAlpha + 1024.0 * kBeta) * 1e6;
  bool found = false;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("pid") == 1 && e.at("name") == "psum") {
      EXPECT_DOUBLE_EQ(e.at("dur").get<double>(), ring_us);
      EXPECT_EQ(e.at("args").at("algorithm"), "ring");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ChromeTrace, OverlappingStartsTakeLanesOfTheirOwn) {
  // Two starts in flight at once in virtual time: [0, 1.25] and [0.125,
  // 1.375] overlap, so they go on two async lanes, each apart from the
  // device's own track.
  Runtime runtime(2);
  const LaunchRecord record = traced(
      runtime, Mesh::make({{"x", 2}}),
      [](DeviceContext& ctx) {
        const Array x = Array::full({256}, DType::kFloat32, 1);
        Pending a = ppermute_start(ctx, x, "x", {{0, 1}, {1, 0}});
        ctx.advance(0.125);
        Pending b = ppermute_start(ctx, x, "x", {{0, 1}, {1, 0}});
        a.done();
        b.done();
      },
      fully_connected(2));
  const auto doc = nlohmann::json::parse(chrome_trace_json(record));
  std::map<std::string, std::set<int64_t>> tracks;  // op -> tids (virtual view, device 0)
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X" || e.at("pid") != 1 || e.at("args").at("position") != 0) continue;
    tracks[e.at("name")].insert(e.at("tid").get<int64_t>());
  }
  ASSERT_EQ(tracks["ppermute"].size(), 2u) << "one lane per overlapping start";
  ASSERT_EQ(tracks["advance"].size(), 1u);
  EXPECT_EQ(tracks["ppermute"].count(*tracks["advance"].begin()), 0u);
}

TEST(ChromeTrace, WithoutVirtualTimeHasOnlyTheWallView) {
  Runtime runtime(2);
  const LaunchRecord record = traced(runtime, Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
  });
  const auto doc = nlohmann::json::parse(chrome_trace_json(record));
  for (const auto& e : doc.at("traceEvents")) EXPECT_EQ(e.at("pid"), 2);
}

// Axis names are the user's bytes: ones that are not UTF-8 become U+FFFD in
// the JSON instead of failing the export (nlohmann's type_error escaped, and
// the file had already been truncated).
TEST(ChromeTrace, NamesThatAreNotUtf8AreReplaced) {
  Runtime runtime(2);
  const std::string axis = "caf\xc3";  // a cut multibyte character
  const LaunchRecord record = traced(runtime, Mesh::make({{axis, 2}}), [&](DeviceContext& ctx) {
    psum(ctx, Array::full({4}, DType::kFloat32, 1), axis);
  });
  const std::string text = chrome_trace_json(record);
  EXPECT_NE(text.find("caf\xef\xbf\xbd"), std::string::npos);  // U+FFFD
  EXPECT_TRUE(nlohmann::json::parse(text).is_object());
}

// An event a user built may hold any times: their difference is taken in
// double, not in int64_t, where it overflowed (undefined behaviour, and a
// negative wall_us).
TEST(ChromeTrace, ExtremeWallTimesDoNotOverflow) {
  Runtime runtime(2);
  LaunchRecord record = traced(runtime, Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
  });
  ASSERT_FALSE(record.events.empty());
  record.events[0].wall_start_ns = std::numeric_limits<int64_t>::min();
  record.events[0].wall_end_ns = std::numeric_limits<int64_t>::max();
  const auto doc = nlohmann::json::parse(chrome_trace_json(record));
  bool seen = false;
  for (const auto& event : doc.at("traceEvents")) {
    if (!event.contains("args") || !event["args"].contains("wall_us")) continue;
    if (event["args"]["wall_us"].get<double>() > 1e16) seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST(ChromeTrace, WritesAFileOrNamesThePath) {
  Runtime runtime(2);
  const LaunchRecord record = traced(runtime, Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
  });
  const auto path = std::filesystem::temp_directory_path() / "meshsim_trace_test.json";
  write_chrome_trace(record, path.string());
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in).at("otherData").at("generator"), "meshsim");
  std::filesystem::remove(path);
  EXPECT_ERROR(write_chrome_trace(record, "/nonexistent-dir/trace.json"), InvalidArgumentError,
               "/nonexistent-dir/trace.json");
}

}  // namespace
}  // namespace meshsim::trace_test
