// Deadlock detection latency: time from the moment the last device enters a
// wait that can never end (device 0 meets over "y" first, every other device
// over "x" first) to the DeadlockError on the launching thread. It includes
// each device's spin/yield budget before it blocks, after which the detector
// runs at once. Target (reliability issue): milliseconds, not seconds.

#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>

#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

void BM_DeadlockDetection(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n / 2}, {"y", 2}});
  const Array x = Array::zeros({1}, DType::kFloat32);
  for (auto _ : state) {
    std::atomic<int64_t> last_entry{0};
    bool detected = false;
    try {
      rt.launch(mesh, [&](DeviceContext& ctx) {
        const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
        int64_t seen = last_entry.load();
        while (now > seen && !last_entry.compare_exchange_weak(seen, now)) {
        }
        if (ctx.device_id() == 0) psum(ctx, x, "y");
        psum(ctx, x, "x");
      });
    } catch (const DeadlockError&) {
      detected = true;
    }
    const int64_t end = std::chrono::steady_clock::now().time_since_epoch().count();
    if (!detected) {
      state.SkipWithError("no DeadlockError");
      return;
    }
    state.SetIterationTime(static_cast<double>(end - last_entry.load()) * 1e-9);
  }
}
BENCHMARK(BM_DeadlockDetection)
    ->ArgName("devices")
    ->Arg(2)
    ->Arg(8)
    ->Arg(64)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim
