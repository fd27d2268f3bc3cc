// Launch + join of an empty function: the fixed cost every launch (and so
// every shard_map call) pays — wake each device thread, run, wait for all.

#include <benchmark/benchmark.h>

#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

// One iteration = one Runtime::launch on a 1-axis mesh of all devices. The
// Runtime (its threads) is built once, outside the timed loop. Real time:
// the work happens on the device threads, not on the timing thread.
void BM_LaunchEmpty(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n}});
  for (auto _ : state) {
    rt.launch(mesh, [](DeviceContext&) {});
  }
}
BENCHMARK(BM_LaunchEmpty)
    ->ArgName("devices")
    ->Arg(2)
    ->Arg(8)
    ->Arg(64)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// A whole launch in which every device does one psum of one float, on many
// more devices than cores: the wake-up of every thread is most of the cost.
// Target (bench issue): 1024 devices <= 20 ms; 4096 devices must work.
void BM_LaunchPsumJoin(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n}});
  const Array one = Array::full({1}, DType::kFloat32, 1.0);
  float last = 0;
  for (auto _ : state) {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      const Array sum = psum(ctx, one, "x");
      if (ctx.position() == n - 1) last = sum.at<float>({0});
    });
  }
  if (last != static_cast<float>(n)) state.SkipWithError("wrong psum");
}
BENCHMARK(BM_LaunchPsumJoin)
    ->ArgName("devices")
    ->Arg(1024)
    ->Arg(4096)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim
