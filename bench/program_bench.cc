// Test throughput: how many small sharded programs per second a unit-test
// suite can run — the "hundreds of cases a second" user. One program is a
// whole shard_map call on 8 devices: split a 1 KiB-per-device input, one psum
// and one all_gather on every device, gather the output on the host.
// Target (meshsim bench issue): >= 10,000 programs per second on 2 cores.

#include <benchmark/benchmark.h>

#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

void BM_SmallShardMapProgram(benchmark::State& state) {
  Runtime rt(8);
  const Mesh mesh = Mesh::make({{"x", 8}});
  const Array input = Array::iota({8 * 256}, DType::kFloat32);  // 1 KiB per device
  auto body = [](DeviceContext& ctx, const Array& shard) {
    const Array summed = psum(ctx, shard, "x");
    return all_gather(ctx, summed, "x", {.tiled = true});
  };
  Array out;
  for (auto _ : state) {
    out = shard_map(rt, mesh, body, P{"x"}, P{}, input);
    benchmark::DoNotOptimize(out);
  }
  // Element 0 of every device's summed shard is sum over devices of 256*p.
  if (out.span<float>()[0] != 256.f * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7)) {
    state.SkipWithError("wrong result");
  }
  state.counters["programs"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SmallShardMapProgram)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace meshsim
