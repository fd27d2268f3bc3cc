// The point-to-point fabric and the algorithms on it, each next to a
// reference measured in the same run (the targets in brackets):
// - BM_LinkLatency, 8 bytes on 2 devices: one way over a link [<= 1 us].
//   Reference: an episode of cli::YieldBarrier on the same two device
//   threads, the cheapest way for them to meet.
// - BM_LinkBandwidth, 16 MiB from one sender to one receiver, by segment
//   size: the link's bandwidth against a single-thread memcpy of the same
//   bytes [vs_memcpy >= 0.8].
// - BM_RingVsDirect, all-reduce of 16 MiB float32 on 8 devices: the ring's
//   busbw against direct's [vs_direct >= 0.5].
// Each runs 5 repetitions and reports only their aggregates: read the
// median rows (the counters too are medians over the repetitions).
//
// Timing method. The link probes are algorithms registered on the
// benchmark's own runtime ("pingpong", "stream": all_reduce algorithms, so a
// psum call carries them) that time their transfers inside the call, on the
// device thread, and end with a true pairwise all-reduce, so the call still
// returns psum's result, which the benchmark checks. One benchmark batch
// (KeepRunningBatch) is one launch with one such call doing the batch's
// transfers; the probe's own clock goes to SetIterationTime (UseManualTime).
// A row's time is per one-way trip (latency) or per 16 MiB transfer
// (bandwidth). BM_RingVsDirect times psums as psum_bench does: device 0
// times a loop of `batch` calls after a warm-up call.

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"
#include "tools/bench_machine.h"

namespace meshsim {
namespace {

// What a probe measured in its last call: written on a device thread during
// a launch, read by the host after it (the launch's end orders the two).
struct ProbeResult {
  double seconds = 0;
  int64_t errors = 0;  // echoes that came back wrong
};

std::string pair_only(const CallShape& shape) {
  return shape.group_size == 2 ? "" : "a probe of one link: needs exactly 2 members";
}

// out = in op peer's in, for a group of two (both members get the same bits:
// two operands, a commutative op). The received block goes to scratch first,
// since `in` may be `out`, which the peer reads in place.
void pair_all_reduce(Communicator& comm, const AllReduceArgs& args) {
  const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
  std::vector<std::byte> peer_in(bytes);
  const int peer = 1 - comm.rank();
  comm.sendrecv(peer, args.in, peer, peer_in.data(), bytes);
  if (args.out != args.in) std::memcpy(args.out, args.in, bytes);
  reduce_elements(args.op, args.dtype, args.out, peer_in.data(), args.count);
}

constexpr int64_t kDefaultRoundTrips = 1000;

// Rank 0 throws an 8-byte counter, rank 1 echoes it: one untimed round trip
// (both members are in the call), then `round_trips` timed ones.
Algorithm<AllReduceArgs> pingpong(ProbeResult* result) {
  Algorithm<AllReduceArgs> a;
  a.name = "pingpong";
  a.description = "probe: 8-byte round trips between ranks 0 and 1, then a pairwise all-reduce";
  // The cost sees no tunable: K at its default.
  a.cost_formula = "(2K+3)α + Sβ + Sγ, K = round_trips";
  a.cost = [](const CallShape& s) {
    return CostTerms{.latency = 2 * kDefaultRoundTrips + 3.0,
                     .bytes = static_cast<double>(s.bytes),
                     .reduced_bytes = static_cast<double>(s.bytes)};
  };
  a.check = pair_only;
  a.tunables = {{"round_trips", kDefaultRoundTrips, "K: timed round trips per call"}};
  a.run = [result](Communicator& comm, const AllReduceArgs& args) {
    const int64_t trips = comm.tunable("round_trips");
    const int peer = 1 - comm.rank();
    uint64_t ball = 0, caught = 0;
    // Each buffer stays unchanged until its reader is done: the next throw
    // comes after the echo was read, and the echo after the throw was read.
    const auto round_trip = [&](uint64_t i) {
      if (comm.rank() == 0) {
        ball = i;
        comm.send(peer, &ball, sizeof ball);
        comm.recv(peer, &caught, sizeof caught);
        if (caught != i) ++result->errors;
      } else {
        comm.recv(peer, &caught, sizeof caught);
        comm.send(peer, &caught, sizeof caught);
      }
    };
    round_trip(0);
    const auto start = bench::Clock::now();
    for (int64_t i = 1; i <= trips; ++i) round_trip(static_cast<uint64_t>(i));
    if (comm.rank() == 0) result->seconds = bench::seconds_since(start);
    pair_all_reduce(comm, args);
  };
  return a;
}

// Rank 0 sends its whole input to rank 1 `repeats` times; rank 1 times each
// receive from after a barrier of the two to its return (so the sender's
// posting is in the time, the meeting is not).
Algorithm<AllReduceArgs> stream(ProbeResult* result) {
  Algorithm<AllReduceArgs> a;
  a.name = "stream";
  a.description = "probe: rank 0's input to rank 1, repeated, then a pairwise all-reduce";
  // The cost sees no tunable: R at its default.
  a.cost_formula = "(R+1)α + (R+1)·Sβ + Sγ, R = repeats";
  a.cost = [](const CallShape& s) {
    return CostTerms{.latency = 2,
                     .bytes = 2 * static_cast<double>(s.bytes),
                     .reduced_bytes = static_cast<double>(s.bytes)};
  };
  a.check = pair_only;
  a.tunables = {{"segment_bytes", int64_t{1} << 20, "bytes per link descriptor"},
                {"repeats", 1, "R: timed transfers per call"}};
  a.run = [result](Communicator& comm, const AllReduceArgs& args) {
    const int64_t repeats = comm.tunable("repeats");
    const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
    double seconds = 0;
    for (int64_t r = 0; r < repeats; ++r) {
      comm.barrier();  // the previous receive is done: the input is free to send again
      if (comm.rank() == 0) {
        comm.send(1, args.in, bytes);
        continue;
      }
      const auto start = bench::Clock::now();
      comm.recv(0, args.out, bytes);
      seconds += bench::seconds_since(start);
    }
    comm.wait_sends();
    if (comm.rank() == 1) result->seconds = seconds;
    pair_all_reduce(comm, args);
  };
  return a;
}

std::vector<Array> ones(int n, int64_t elements) {
  // One input per device (not one shared buffer), as on a real mesh.
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) inputs.push_back(Array::full({elements}, DType::kFloat32, 1.0));
  return inputs;
}

// One launch: every device makes `calls` psums with `algorithm` after one
// untimed warm-up; returns device 0's time for the calls and how many devices'
// last result is not all n (a psum of ones).
struct PsumRun {
  double seconds = 0;
  int wrong_devices = 0;
};
PsumRun run_psums(Runtime& rt, const Mesh& mesh, const std::vector<Array>& inputs, int64_t calls,
                  std::string_view algorithm) {
  const Array expected = Array::full(inputs[0].shape(), DType::kFloat32, mesh.size());
  std::atomic<int> wrong{0};
  PsumRun run;
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const Array& x = inputs[ctx.position()];
    Array out = psum(ctx, x, "x", {}, algorithm);
    const auto start = bench::Clock::now();
    for (int64_t i = 0; i < calls; ++i) out = psum(ctx, x, "x", {}, algorithm);
    if (ctx.position() == 0) run.seconds = bench::seconds_since(start);
    if (!array_equal(out, expected)) ++wrong;
  });
  run.wrong_devices = wrong.load();
  return run;
}

bool results_ok(benchmark::State& state, int wrong_devices, int64_t errors) {
  if (wrong_devices == 0 && errors == 0) return true;
  state.SkipWithError((std::to_string(wrong_devices) + " devices' psum of ones is wrong, " +
                       std::to_string(errors) + " echoes came back wrong")
                          .c_str());
  return false;
}

void BM_LinkLatency(benchmark::State& state) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  Runtime rt(2);
  ProbeResult result;
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(pingpong(&result));
  const std::vector<Array> inputs = ones(2, 2);  // 8 bytes

  double seconds = 0;
  int wrong_devices = 0;
  int64_t errors = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    // An iteration is one way; a round trip is two.
    const int64_t trips = (state.max_iterations + 1) / 2;
    registry.set_tunable(Collective::kAllReduce, "pingpong", "round_trips", trips);
    result = ProbeResult{};
    const PsumRun run = run_psums(rt, mesh, inputs, 0, "pingpong");  // the warm-up call only
    const double one_way = result.seconds / static_cast<double>(2 * trips);
    state.SetIterationTime(one_way * static_cast<double>(state.max_iterations));
    seconds += one_way * static_cast<double>(state.max_iterations);
    wrong_devices += run.wrong_devices;
    errors += result.errors;
  }
  if (!results_ok(state, wrong_devices, errors)) return;
  const double one_way_us = seconds / static_cast<double>(state.iterations()) * 1e6;
  const cli::MeetingFloor floor = cli::measure_meeting_floor(rt, mesh);
  state.counters["one_way_us"] = one_way_us;
  state.counters["barrier_us"] = floor.yield_barrier_us;
  state.counters["vs_barrier"] = one_way_us / floor.yield_barrier_us;
}
BENCHMARK(BM_LinkLatency)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

void BM_LinkBandwidth(benchmark::State& state) {
  const int64_t segment = state.range(0);
  constexpr size_t kBytes = size_t{16} << 20;
  const Mesh mesh = Mesh::make({{"x", 2}});
  Runtime rt(2);
  ProbeResult result;
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(stream(&result));
  registry.set_tunable(Collective::kAllReduce, "stream", "segment_bytes", segment);
  const std::vector<Array> inputs = ones(2, kBytes / sizeof(float));
  cli::MemcpyRunner memcpy_reference(kBytes, /*threads=*/1);

  double link_seconds = 0, memcpy_seconds = 0;
  int wrong_devices = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    registry.set_tunable(Collective::kAllReduce, "stream", "repeats", state.max_iterations);
    result = ProbeResult{};
    const PsumRun run = run_psums(rt, mesh, inputs, 0, "stream");
    state.SetIterationTime(result.seconds);
    link_seconds += result.seconds;
    memcpy_seconds += memcpy_reference.run(static_cast<size_t>(state.max_iterations));
    wrong_devices += run.wrong_devices;
  }
  if (!results_ok(state, wrong_devices, 0)) return;
  const double total = static_cast<double>(kBytes) * static_cast<double>(state.iterations());
  state.counters["link_GBps"] = total / link_seconds / 1e9;
  state.counters["memcpy_GBps"] = total / memcpy_seconds / 1e9;
  state.counters["vs_memcpy"] = memcpy_seconds / link_seconds;
}
BENCHMARK(BM_LinkBandwidth)
    ->ArgName("segment")
    ->Arg(int64_t{1} << 20)
    ->Arg(int64_t{16} << 20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

void BM_RingVsDirect(benchmark::State& state) {
  constexpr int kDevices = 8;
  constexpr int64_t kElements = int64_t{4} << 20;  // 16 MiB of float32
  const Mesh mesh = Mesh::make({{"x", kDevices}});
  Runtime rt(kDevices);
  if (algorithm_registry(rt).find(Collective::kAllReduce, "ring") == nullptr) {
    state.SkipWithError("no all_reduce algorithm 'ring' is registered");
    return;
  }
  const std::vector<Array> inputs = ones(kDevices, kElements);

  double ring_seconds = 0, direct_seconds = 0;
  int wrong_devices = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const PsumRun ring = run_psums(rt, mesh, inputs, state.max_iterations, "ring");
    const PsumRun direct = run_psums(rt, mesh, inputs, state.max_iterations, "direct");
    state.SetIterationTime(ring.seconds);
    ring_seconds += ring.seconds;
    direct_seconds += direct.seconds;
    wrong_devices += ring.wrong_devices + direct.wrong_devices;
  }
  if (!results_ok(state, wrong_devices, 0)) return;
  // busbw = S / t · 2(n-1)/n (nccl-tests), per call.
  const double bus_bytes = static_cast<double>(kElements) * sizeof(float) * 2 * (kDevices - 1) /
                           kDevices * static_cast<double>(state.iterations());
  state.counters["ring_busbw_GBps"] = bus_bytes / ring_seconds / 1e9;
  state.counters["direct_busbw_GBps"] = bus_bytes / direct_seconds / 1e9;
  state.counters["vs_direct"] = direct_seconds / ring_seconds;
}
BENCHMARK(BM_RingVsDirect)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace
}  // namespace meshsim
