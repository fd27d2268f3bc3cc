// What keeping virtual time costs the wall clock (runtime/time/virtual_time.h):
// the same psum with virtual time off (arg 0) and on (arg 1), in one run, so
// the ratio is what to read.
// - BM_PsumVirtualTime/on/devices: one float32 psum timed inside a launch
//   (device 0 times max_iterations psums after a warm-up), direct algorithm:
//   with time on, each member also posts its clock and prices n - 1 transfers.
// - BM_RingPsumVirtualTime/on: 16 MiB float32 psum on 8 devices with the ring
//   algorithm: every transfer also carries its departure and is priced.
// The modeled time of the last psum is checked against its closed form on a
// fully connected network (direct: alpha + n beta; ring: 2 (p - 1) (alpha +
// n / p beta)), and the psum's result against p.
// - BM_RingAllReducePricing/aware/devices: what pricing costs at scale: one
//   launch of a ring all-reduce (64 B per step) on a unidirectional ring of
//   `devices` fibers, priced as the devices go by the congestion-unaware
//   model (aware 0) or recorded and replayed after the launch by the
//   congestion-aware one (aware 1). items/s = transfers priced per second of
//   the whole launch; the makespan is checked against 2 (p - 1) (alpha +
//   64 B beta), which both give on a ring that matches the algorithm.
// Run: meshsim_bench_virtual_time --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <atomic>
#include <cmath>
#include <memory>

#include "bench_util.h"
#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

constexpr double kAlpha = 1e-6;
constexpr double kBandwidth = 100e9;

LaunchOptions options_for(const benchmark::State& state, int devices) {
  if (state.range(0) == 0) return {};
  auto time = std::make_shared<VirtualTime>();
  time->network = std::make_shared<CongestionUnawareModel>(
      Topology({{DimensionKind::fully_connected, devices, kBandwidth, kAlpha}}));
  return {.time = time};
}

// Times `reps` calls of `step` on device 0 after one warm-up call, and checks
// the result and the modeled time of the last call.
template <class Step>
void run(benchmark::State& state, int n, Step step, double modeled) {
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n}});
  const LaunchOptions options = options_for(state, n);
  std::atomic<int> wrong{0};
  double seconds = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;
    rt.launch(mesh, [&](DeviceContext& ctx) {
      Array out = step(ctx);
      const auto start = bench::Clock::now();
      for (int64_t i = 0; i < count; ++i) {
        const double before = ctx.now();
        out = step(ctx);
        if (options.time && std::abs(ctx.now() - before - modeled) > 1e-9 * modeled) {
          wrong.fetch_add(1);
        }
      }
      if (ctx.position() == 0) seconds = bench::seconds_since(start);
      if (out.at<float>({0}) != static_cast<float>(n)) wrong.fetch_add(1);
    }, options);
    state.SetIterationTime(seconds);
  }
  if (wrong.load() != 0) state.SkipWithError("wrong result or modeled time");
  state.SetLabel(state.range(0) ? "virtual time on" : "virtual time off");
}

void BM_PsumVirtualTime(benchmark::State& state) {
  const int n = static_cast<int>(state.range(1));
  const Array one = Array::full({1}, DType::kFloat32, 1.0);
  run(state, n, [&](DeviceContext& ctx) { return psum(ctx, one, "x", {}, "direct"); },
      kAlpha + 4 / kBandwidth);
}
BENCHMARK(BM_PsumVirtualTime)
    ->ArgNames({"on", "devices"})
    ->ArgsProduct({{0, 1}, {2, 8}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

void BM_RingPsumVirtualTime(benchmark::State& state) {
  const int n = 8;
  const int64_t count = int64_t{4} << 20;  // 16 MiB of float32
  const Array ones = Array::full({count}, DType::kFloat32, 1.0);
  run(state, n, [&](DeviceContext& ctx) { return psum(ctx, ones, "x", {}, "ring"); },
      2 * (n - 1) * (kAlpha + 4.0 * count / n / kBandwidth));
}
BENCHMARK(BM_RingPsumVirtualTime)
    ->ArgNames({"on"})
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Iterations(10)
    ->Unit(benchmark::kMillisecond);

void BM_RingAllReducePricing(benchmark::State& state) {
  const bool aware = state.range(0) != 0;
  const int n = static_cast<int>(state.range(1));
  const int64_t chunk = 64;
  const Array ones = Array::full({n * chunk / 4}, DType::kFloat32, 1.0);
  const Topology ring({{DimensionKind::ring, n, kBandwidth, kAlpha}});
  auto time = std::make_shared<VirtualTime>();
  if (aware) {
    time->network = std::make_shared<CongestionAwareModel>(ring);
  } else {
    time->network = std::make_shared<CongestionUnawareModel>(ring);
  }
  RuntimeOptions fibers;
  fibers.execution = ExecutionMode::kFibers;
  Runtime rt(n, fibers);
  const Mesh mesh = Mesh::make({{"x", n}});
  LaunchRecord record;
  std::atomic<int> wrong{0};
  for (auto _ : state) {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      if (psum(ctx, ones, "x", {}, "ring").at<float>({0}) != static_cast<float>(n)) {
        wrong.fetch_add(1);
      }
    }, {.time = time, .record = &record});
  }
  const double expected = 2 * (n - 1) * (kAlpha + chunk / kBandwidth);
  if (wrong.load() != 0 || std::abs(record.makespan() - expected) > 1e-9 * expected) {
    state.SkipWithError("wrong result or modeled time");
  }
  state.SetItemsProcessed(state.iterations() * 2 * (n - 1) * int64_t{n});
  state.SetLabel(aware ? "congestion-aware, replayed" : "congestion-unaware, as it goes");
}
BENCHMARK(BM_RingAllReducePricing)
    ->ArgNames({"aware", "devices"})
    ->ArgsProduct({{0, 1}, {64, 1024}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim
