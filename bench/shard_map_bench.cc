// shard_map's data movement: split + gather of a 256 MiB float32 array over 8
// devices (P("x") in and out, identity body), next to a plain memcpy of the
// same traffic in the same process.
//
// Bytes: split copies the 256 MiB global array into 8 shards (copy in), gather
// copies the 8 shards into a new 256 MiB global array (copy out): 2 x 256 MiB
// moved. The memcpy reference (cli::MemcpyRunner, the one `meshsim bench`
// prints) copies 256 MiB twice between pre-faulted buffers: the same traffic,
// in 1 or 2 persistent threads.

#include <benchmark/benchmark.h>

#include <cstdint>

#include "bench_util.h"
#include "meshsim/meshsim.h"
#include "tools/bench_machine.h"

namespace meshsim {
namespace {

constexpr int kDevices = 8;
constexpr size_t kArrayBytes = size_t{256} << 20;
constexpr size_t kCopies = 2;  // split copies the array once, gather once more

// One iteration = one shard_map call, timed on the host from the call to the
// release of its output (allocating, faulting and freeing the shards and the
// output are part of what a caller pays). After the timed call, the same
// iteration runs the 2-thread and the 1-thread memcpy reference untimed, so
// each row carries references measured under the same machine load:
// memcpy2 / memcpy1 (bytes/s) and vs_memcpy2 = shard_map bandwidth / memcpy2.
void BM_ShardMapSplitGather(benchmark::State& state) {
  Runtime rt(kDevices);
  const Mesh mesh = Mesh::make({{"x", kDevices}});
  const Array global =
      Array::iota({static_cast<int64_t>(kArrayBytes / sizeof(float))}, DType::kFloat32);
  cli::MemcpyRunner memcpy2(kArrayBytes, 2), memcpy1(kArrayBytes, 1);
  const auto identity = [](DeviceContext&, const Array& shard) { return shard; };

  // Untimed first call: checks the result and starts oneTBB's worker threads.
  if (!array_equal(shard_map(rt, mesh, identity, P{"x"}, P{"x"}, global), global)) {
    state.SkipWithError("shard_map with an identity body did not return its input");
    return;
  }
  double shard_map_seconds = 0, memcpy2_seconds = 0, memcpy1_seconds = 0;
  for (auto _ : state) {
    const auto start = bench::Clock::now();
    benchmark::DoNotOptimize(shard_map(rt, mesh, identity, P{"x"}, P{"x"}, global).bytes());
    const double seconds = bench::seconds_since(start);
    state.SetIterationTime(seconds);
    shard_map_seconds += seconds;
    memcpy2_seconds += memcpy2.run(kCopies);
    memcpy1_seconds += memcpy1.run(kCopies);
  }

  const double bytes = static_cast<double>(kCopies * kArrayBytes) * state.iterations();
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  const auto rate = [&](double seconds) {
    return benchmark::Counter(bytes / seconds, benchmark::Counter::kDefaults,
                              benchmark::Counter::kIs1024);
  };
  state.counters["memcpy2"] = rate(memcpy2_seconds);
  state.counters["memcpy1"] = rate(memcpy1_seconds);
  state.counters["vs_memcpy2"] = memcpy2_seconds / shard_map_seconds;
}
BENCHMARK(BM_ShardMapSplitGather)->UseManualTime()->Iterations(4)->Unit(benchmark::kMillisecond);

// The references alone, one row each: one iteration = two copies of 256 MiB,
// pre-faulted buffers.
void BM_Memcpy(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  cli::MemcpyRunner copy(kArrayBytes, threads);
  for (auto _ : state) state.SetIterationTime(copy.run(kCopies));
  state.SetBytesProcessed(static_cast<int64_t>(kCopies * kArrayBytes) * state.iterations());
}
BENCHMARK(BM_Memcpy)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseManualTime()
    ->Iterations(4)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace meshsim
