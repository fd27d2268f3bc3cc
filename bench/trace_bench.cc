// What tracing a launch costs the wall clock (LaunchOptions::trace): the same
// psum on 8 devices with tracing off (arg 0) and on (arg 1), in one run, so
// the ratio is what to read. With tracing on, every call of every device is
// recorded (the capacity holds them all), and the event count is checked.
// Each benchmark first makes one untimed launch of the same size: steady
// state, in which the devices reuse their trace memory. 2000 calls keep the
// 8 devices' events (128 B each, 2 MB) in cache; a trace that outgrows the
// caches costs more per event (memory writes).
// - BM_PsumTrace/on: an 8-byte (2 x float32) psum, direct algorithm; device 0
//   times `iterations` psums after a warm-up inside one launch.
// - BM_LargePsumTrace/on: a 16 MiB float32 psum, the same way.
// Tracing off here against the same benchmark built without tracing (the
// commit before it) is the cost of the disabled path: run both binaries in
// interleaved rounds and compare medians.
// Run: meshsim_bench_trace --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <atomic>

#include "bench_util.h"
#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

constexpr int kDevices = 8;

void run(benchmark::State& state, int64_t count) {
  Runtime rt(kDevices);
  const Mesh mesh = Mesh::make({{"x", kDevices}});
  const Array ones = Array::full({count}, DType::kFloat32, 1.0);
  const bool on = state.range(0) != 0;
  std::atomic<int> wrong{0};
  double seconds = 0;
  LaunchRecord record;
  const auto launch = [&](int64_t calls) {
    rt.launch(
        mesh,
        [&](DeviceContext& ctx) {
          Array out = psum(ctx, ones, "x");
          const auto start = bench::Clock::now();
          for (int64_t i = 0; i < calls; ++i) out = psum(ctx, ones, "x");
          if (ctx.position() == 0) seconds = bench::seconds_since(start);
          if (out.at<float>({0}) != static_cast<float>(kDevices)) wrong.fetch_add(1);
        },
        {.time = nullptr,
         .record = &record,
         .trace = on,
         .trace_capacity = static_cast<size_t>(calls) + 1});
    if (on && record.events.size() != static_cast<size_t>(kDevices * (calls + 1))) {
      wrong.fetch_add(1);
    }
  };
  // Steady state: a device keeps its trace's memory from one traced launch
  // to the next, so the first launch (which touches it first) is untimed.
  launch(state.max_iterations);
  while (state.KeepRunningBatch(state.max_iterations)) {
    launch(state.max_iterations);
    state.SetIterationTime(seconds);
  }
  if (wrong.load() != 0) state.SkipWithError("wrong result or event count");
  state.SetLabel(on ? "tracing on" : "tracing off");
}

void BM_PsumTrace(benchmark::State& state) { run(state, 2); }
BENCHMARK(BM_PsumTrace)
    ->ArgNames({"on"})
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(2000)
    ->Unit(benchmark::kMicrosecond);

void BM_LargePsumTrace(benchmark::State& state) { run(state, int64_t{4} << 20); }
BENCHMARK(BM_LargePsumTrace)
    ->ArgNames({"on"})
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim
