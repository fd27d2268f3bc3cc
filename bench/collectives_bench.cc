// Every collective of `meshsim bench` on a 1-axis mesh "x" of 2, 4 and 8
// devices, float32, sum, sizes S = 256 B to 64 MiB per device, each next to a
// memcpy reference and its memory-traffic floor measured in the same run.
//
// Workloads, sizes, busbw factors and floors are the CLI's
// (tools/bench_collectives.h; `meshsim bench --help` states them), so a row
// here and a row of `meshsim bench <collective> --mesh n` measure the same
// thing. S is nccl-tests' size column: max(send, receive) bytes of one device,
// rounded down to whole elements (and to n blocks where the collective splits
// its buffer); a size with no element per device is skipped.
//
// Timing method: that of psum_bench.cc. Each benchmark run is one launch;
// every device runs two untimed warm-up collectives, then max_iterations timed
// ones back to back; device 0's loop time goes to SetIterationTime
// (UseManualTime), so a row reads "time per collective". After the timed loop
// every device compares its last result, bit for bit, with the sequential
// reference and the row fails with SkipWithError if any element differs.
//
// Counters, in GB/s (1e9 bytes) unless a ratio:
//   algbw, busbw  nccl-tests': S / t, and algbw times the collective's factor.
//   memcpy_GBps   a 2-thread memcpy of n·S bytes, the devices' working set
//                 (cli::measure_memcpy of cli::memcpy_reference_bytes, the
//                 reference `meshsim bench` prints), measured in the same run,
//                 outside the manual time.
//   vs_memcpy     algbw / memcpy_GBps.
//   floor_us      the floor: the collective's floor bytes (e.g. 2·n·S for
//                 psum) / memcpy_GBps; absent for the zero-copy ppermute and
//                 pbroadcast.
//   vs_floor      t / floor_us: 1.0 = as fast as memory allows.

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.h"
#include "meshsim/meshsim.h"
#include "tools/bench_collectives.h"
#include "tools/bench_machine.h"
#include "tools/bench_reference.h"

namespace meshsim {
namespace {

void BM_Collective(benchmark::State& state, const char* name) {
  const cli::Collective& collective = *cli::find_collective(name);
  const int n = static_cast<int>(state.range(0));
  const auto bytes = static_cast<size_t>(state.range(1));
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n}});
  const std::vector<std::string> axes = {"x"};
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), axes);
  const cli::Workload work = collective.prepare({}, groups, bytes, /*with_expected=*/true);
  if (work.args.empty()) {
    state.SkipWithError("no element per device at this size");
    return;
  }

  std::atomic<int64_t> wrong{0};
  double total_seconds = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;
    double seconds = 0;
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const int p = ctx.position();
      // Two warm-up calls: the steady state holds two results per device (the
      // previous one is freed after the next is made), so the timed calls
      // reuse memory already mapped instead of faulting fresh pages.
      Array out = collective.run(ctx, work, p, axes, {});
      out = collective.run(ctx, work, p, axes, {});
      const auto start = bench::Clock::now();
      for (int64_t i = 0; i < count; ++i) out = collective.run(ctx, work, p, axes, {});
      if (p == 0) seconds = bench::seconds_since(start);
      wrong += cli::count_wrong(out, work.expected[p]);
    });
    state.SetIterationTime(seconds);
    total_seconds += seconds;
  }
  if (wrong > 0) {
    state.SkipWithError((std::to_string(wrong.load()) + " wrong elements").c_str());
    return;
  }

  const double t = total_seconds / static_cast<double>(state.iterations());
  const cli::Bandwidth bw = cli::bandwidth(collective, work.size(), t, n);
  const double memcpy =
      cli::measure_memcpy(cli::memcpy_reference_bytes(n, work.size())).gbps();
  state.counters["algbw"] = bw.algbw;
  state.counters["busbw"] = bw.busbw;
  state.counters["memcpy_GBps"] = memcpy;
  state.counters["vs_memcpy"] = bw.algbw / memcpy;
  const double floor_bytes = collective.floor_bytes(n, static_cast<double>(work.size()));
  if (floor_bytes > 0) {
    const double floor_us = floor_bytes / (memcpy * 1e9) * 1e6;
    state.counters["floor_us"] = floor_us;
    state.counters["vs_floor"] = t * 1e6 / floor_us;
  }
}

// Rows {devices, S} for S in 256 B, 1 KiB, 64 KiB, 1 MiB, 16 MiB, 64 MiB.
// 256 B is the smallest size that leaves every collective an element per block
// on 8 devices; the latency of one float is psum_bench.cc's.
void sizes(benchmark::internal::Benchmark* b) {
  for (const int64_t n : {2, 4, 8}) {
    for (const int64_t size : {256, 1 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20}) {
      b->Args({n, size});
    }
  }
}

// A short MinTime keeps the 100-odd rows near a minute; a 64 MiB row runs
// one or two launches.
#define MESHSIM_COLLECTIVE_BENCH(name)                \
  BENCHMARK_CAPTURE(BM_Collective, name, #name)       \
      ->ArgNames({"devices", "bytes"})                \
      ->Apply(sizes)                                  \
      ->MinTime(0.1)                                  \
      ->UseManualTime()                               \
      ->Unit(benchmark::kMicrosecond)

MESHSIM_COLLECTIVE_BENCH(psum);
MESHSIM_COLLECTIVE_BENCH(all_gather);
MESHSIM_COLLECTIVE_BENCH(psum_scatter);
MESHSIM_COLLECTIVE_BENCH(all_to_all);
MESHSIM_COLLECTIVE_BENCH(ppermute);
MESHSIM_COLLECTIVE_BENCH(pbroadcast);
MESHSIM_COLLECTIVE_BENCH(ragged_all_to_all);

}  // namespace
}  // namespace meshsim
