// Plans on ShardedArrays (issue 11), each next to its baseline in the same
// run so ratios survive a noisy, shared machine:
// - per-call overhead: an identity plan on 8 devices with 1 KiB shards
//   against Runtime::launch of an empty body (target: the plan adds <= 5 us);
// - small programs per second: psum + all_gather on 8 devices through a plan
//   on ShardedArrays, against the same program through shard_map on host
//   Arrays (bench/program_bench.cc; target >= 30,000 programs/s with plans),
//   with the devices as threads and as fibers;
// - cache hit against miss: a call of a warm plan against building a plan
//   and making its first call.
// Run: meshsim_bench_plan --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "bench_util.h"
#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

constexpr int kDevices = 8;
constexpr int64_t kShardFloats = 256;  // 1 KiB per device

Mesh bench_mesh() { return Mesh::make({{"x", kDevices}}); }

ShardedArray bench_input(const Mesh& mesh) {
  return device_put(Array::iota({kDevices * kShardFloats}, DType::kFloat32),
                    NamedSharding(mesh, P{"x"}));
}

void BM_LaunchEmpty8(benchmark::State& state) {
  Runtime rt(kDevices);
  const Mesh mesh = bench_mesh();
  for (auto _ : state) rt.launch(mesh, [](DeviceContext&) {});
}
BENCHMARK(BM_LaunchEmpty8)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_PlanIdentity8(benchmark::State& state) {
  Runtime rt(kDevices);
  const Mesh mesh = bench_mesh();
  const ShardedArray input = bench_input(mesh);
  const ShardMapPlan plan(
      rt, mesh.abstract_mesh(), [](DeviceContext&, const Array& shard) { return shard; },
      {P{"x"}}, {P{"x"}});
  for (auto _ : state) {
    auto out = plan({input});
    benchmark::DoNotOptimize(out);
  }
  if (plan.stats().misses != 1 || plan.stats().reshards != 0) state.SkipWithError("not cached");
}
BENCHMARK(BM_PlanIdentity8)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The same two calls alternated in one loop and timed one by one, so both
// see the same machine load; the counters are medians in microseconds and
// added_us = plan_us - launch_us, the plan's own per-call cost.
double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

void BM_PlanOverheadPaired8(benchmark::State& state) {
  Runtime rt(kDevices);
  const Mesh mesh = bench_mesh();
  const ShardedArray input = bench_input(mesh);
  const ShardMapPlan plan(
      rt, mesh.abstract_mesh(), [](DeviceContext&, const Array& shard) { return shard; },
      {P{"x"}}, {P{"x"}});
  std::vector<double> launch_us, plan_us;
  for (auto _ : state) {
    auto start = bench::Clock::now();
    rt.launch(mesh, [](DeviceContext&) {});
    launch_us.push_back(bench::seconds_since(start) * 1e6);
    start = bench::Clock::now();
    auto out = plan({input});
    plan_us.push_back(bench::seconds_since(start) * 1e6);
    benchmark::DoNotOptimize(out);
  }
  state.counters["launch_us"] = median(launch_us);
  state.counters["plan_us"] = median(plan_us);
  state.counters["added_us"] = median(plan_us) - median(launch_us);
}
BENCHMARK(BM_PlanOverheadPaired8)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Element 0 of every device's summed shard is the sum over devices of 256 p.
constexpr float kExpectedFirst = 256.f * (0 + 1 + 2 + 3 + 4 + 5 + 6 + 7);

Array small_program(DeviceContext& ctx, const Array& shard) {
  const Array summed = psum(ctx, shard, "x");
  return all_gather(ctx, summed, "x", {.tiled = true});
}

// Arg fibers:1 runs the devices as fibers (ExecutionMode::kFibers): two
// meetings per program then cost user-space switches, not the kernel's.
void BM_SmallProgramPlan(benchmark::State& state) {
  RuntimeOptions options;
  options.execution = state.range(0) != 0 ? ExecutionMode::kFibers : ExecutionMode::kThreads;
  Runtime rt(kDevices, options);
  const Mesh mesh = bench_mesh();
  const ShardedArray input = bench_input(mesh);
  const ShardMapPlan plan(rt, mesh.abstract_mesh(), small_program, {P{"x"}}, {P{}});
  std::vector<ShardedArray> out;
  for (auto _ : state) {
    out = plan({input});
    benchmark::DoNotOptimize(out);
  }
  if (out[0].shard(0).span<float>()[0] != kExpectedFirst) state.SkipWithError("wrong result");
  state.counters["programs"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SmallProgramPlan)
    ->ArgName("fibers")
    ->Arg(0)
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// program_bench's BM_SmallShardMapProgram: split on the host, gather back.
void BM_SmallProgramShardMap(benchmark::State& state) {
  Runtime rt(kDevices);
  const Mesh mesh = bench_mesh();
  const Array input = Array::iota({kDevices * kShardFloats}, DType::kFloat32);
  Array out;
  for (auto _ : state) {
    out = shard_map(rt, mesh, small_program, P{"x"}, P{}, input);
    benchmark::DoNotOptimize(out);
  }
  if (out.span<float>()[0] != kExpectedFirst) state.SkipWithError("wrong result");
  state.counters["programs"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SmallProgramShardMap)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Both versions of the small program alternated and timed one by one (as
// BM_PlanOverheadPaired8): medians in microseconds, and the plan's programs
// per second read off its median.
void BM_SmallProgramPaired(benchmark::State& state) {
  Runtime rt(kDevices);
  const Mesh mesh = bench_mesh();
  const Array host = Array::iota({kDevices * kShardFloats}, DType::kFloat32);
  const ShardedArray input = bench_input(mesh);
  const ShardMapPlan plan(rt, mesh.abstract_mesh(), small_program, {P{"x"}}, {P{}});
  std::vector<double> shard_map_us, plan_us;
  for (auto _ : state) {
    auto start = bench::Clock::now();
    Array a = shard_map(rt, mesh, small_program, P{"x"}, P{}, host);
    shard_map_us.push_back(bench::seconds_since(start) * 1e6);
    start = bench::Clock::now();
    auto b = plan({input});
    plan_us.push_back(bench::seconds_since(start) * 1e6);
    benchmark::DoNotOptimize(a);
    benchmark::DoNotOptimize(b);
  }
  state.counters["shard_map_us"] = median(shard_map_us);
  state.counters["plan_us"] = median(plan_us);
  state.counters["plan_programs_per_s"] = 1e6 / median(plan_us);
  state.counters["shard_map_programs_per_s"] = 1e6 / median(shard_map_us);
}
BENCHMARK(BM_SmallProgramPaired)->UseRealTime()->Unit(benchmark::kMicrosecond);

// A miss: a new plan, so its first call validates and lays out everything.
// Compare with BM_PlanIdentity8 (a hit) for the cost the cache saves.
void BM_PlanMiss8(benchmark::State& state) {
  Runtime rt(kDevices);
  const Mesh mesh = bench_mesh();
  const ShardedArray input = bench_input(mesh);
  for (auto _ : state) {
    const ShardMapPlan plan(
        rt, mesh.abstract_mesh(), [](DeviceContext&, const Array& shard) { return shard; },
        {P{"x"}}, {P{"x"}});
    auto out = plan({input});
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_PlanMiss8)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace meshsim
