// Thread mode against fiber mode (ExecutionMode), every benchmark run in both
// modes in the same process so that each ratio is read off one run of a
// shared, noisy machine. The first argument is the mode (fibers:0 = threads,
// fibers:1 = fibers on one worker per usable core).
// - BM_PsumLatency/fibers/devices: one float32 psum, timed inside one launch
//   (as psum_bench: device 0 times max_iterations psums after a warm-up).
// - BM_LaunchPsum/fibers/devices: a whole launch that runs one psum of one
//   float32 and joins, timed on the host: what a test of a sharded algorithm
//   pays per case.
// - BM_PsumBandwidth/fibers: 16 MiB float32 psum on 8 devices (the copies of
//   the reduce-scatter and all-gather run on the devices: in fiber mode on the
//   workers, one per core, so every core still copies).
// Every result is checked against the closed form (a psum of ones is n).
// Run: meshsim_bench_execution --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_util.h"
#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

RuntimeOptions options_for(const benchmark::State& state) {
  RuntimeOptions options;
  options.execution = state.range(0) != 0 ? ExecutionMode::kFibers : ExecutionMode::kThreads;
  return options;
}

void label(benchmark::State& state, const Runtime& rt) {
  state.SetLabel((rt.execution() == ExecutionMode::kFibers
                      ? "fibers on " + std::to_string(rt.fiber_workers()) + " workers"
                      : std::string("threads")) +
                 (rt.binds_threads() ? ", bound to CPUs" : ""));
}

void BM_PsumLatency(benchmark::State& state) {
  const int n = static_cast<int>(state.range(1));
  Runtime rt(n, options_for(state));
  const Mesh mesh = Mesh::make({{"x", n}});
  const Array one = Array::full({1}, DType::kFloat32, 1.0);
  std::atomic<int> wrong{0};
  double seconds = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;
    rt.launch(mesh, [&](DeviceContext& ctx) {
      Array out = psum(ctx, one, "x");  // warm-up: every device is running after it
      const auto start = bench::Clock::now();
      for (int64_t i = 0; i < count; ++i) out = psum(ctx, one, "x");
      if (ctx.position() == 0) seconds = bench::seconds_since(start);
      if (out.at<float>({0}) != static_cast<float>(n)) wrong.fetch_add(1);
    });
    state.SetIterationTime(seconds);
  }
  if (wrong.load() != 0) state.SkipWithError("a psum of ones was not n");
  label(state, rt);
}
BENCHMARK(BM_PsumLatency)
    ->ArgNames({"fibers", "devices"})
    ->ArgsProduct({{0, 1}, {2, 8, 64}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

void BM_LaunchPsum(benchmark::State& state) {
  const int n = static_cast<int>(state.range(1));
  Runtime rt(n, options_for(state));
  const Mesh mesh = Mesh::make({{"x", n}});
  const Array one = Array::full({1}, DType::kFloat32, 1.0);
  std::atomic<int> wrong{0};
  for (auto _ : state) {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      if (psum(ctx, one, "x").at<float>({0}) != static_cast<float>(n)) wrong.fetch_add(1);
    });
  }
  if (wrong.load() != 0) state.SkipWithError("a psum of ones was not n");
  label(state, rt);
}
BENCHMARK(BM_LaunchPsum)
    ->ArgNames({"fibers", "devices"})
    ->ArgsProduct({{0, 1}, {8, 64, 1024, 4096}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_PsumBandwidth(benchmark::State& state) {
  constexpr int n = 8;
  constexpr int64_t kFloats = int64_t{4} << 20;  // 16 MiB
  Runtime rt(n, options_for(state));
  const Mesh mesh = Mesh::make({{"x", n}});
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) inputs.push_back(Array::full({kFloats}, DType::kFloat32, 1.0));
  std::atomic<int> wrong{0};
  double seconds = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const Array& x = inputs[ctx.position()];
      Array out = psum(ctx, x, "x");
      const auto start = bench::Clock::now();
      for (int64_t i = 0; i < count; ++i) out = psum(ctx, x, "x");
      if (ctx.position() == 0) seconds = bench::seconds_since(start);
      const auto values = out.span<float>();
      for (int64_t i = 0; i < kFloats; i += 4099) {
        if (values[i] != static_cast<float>(n)) wrong.fetch_add(1);
      }
    });
    state.SetIterationTime(seconds);
  }
  if (wrong.load() != 0) state.SkipWithError("a psum of ones was not n");
  state.counters["algbw"] = benchmark::Counter(
      static_cast<double>(kFloats * 4) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  label(state, rt);
}
BENCHMARK(BM_PsumBandwidth)
    ->ArgNames({"fibers"})
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim
