// psum on a 1-axis mesh, each next to the floor it is read against, measured
// in the same run:
// - BM_PsumLatency, one float32: the latency of a meeting (the direct
//   all-reduce's leader path). Floor: an episode of cli::YieldBarrier, the
//   cheapest meeting of the same threads (spin on a shared counter, or
//   sched_yield when threads outnumber cores; never block), and, for
//   comparison, an episode of std::barrier. Both run on the same runtime's
//   device threads right after the psums (cli::measure_meeting_floor, as in
//   the header of `meshsim bench`).
// - BM_PsumBandwidth, 16 MiB float32 per device on 8 devices: the reduce-
//   scatter + all-gather path. Floor: the memory traffic of any all-reduce
//   that reads n inputs and writes n outputs, 2·n·S bytes, at the bandwidth
//   of a 2-thread memcpy of n·S bytes, the devices' working set
//   (cli::measure_memcpy, cli::memcpy_reference_bytes), measured right after.
// - BM_ContextSwitch: the cost of one sched_yield context switch on one CPU,
//   the unit the meeting floor is made of when devices outnumber cores.
//
// Timing method. A launch costs far more than a small psum, so launches are
// not timed. Each benchmark run is one launch, driven by
// KeepRunningBatch(max_iterations): every device runs one untimed warm-up psum
// (when it returns, every device has arrived, so all are running), then
// `max_iterations` timed psums back to back. Device 0 times that loop with a
// steady clock and the host hands it to SetIterationTime (UseManualTime,
// a wall-clock time), so a row reads "time per psum". Device 0's loop is the
// group's: a psum returns only after every member has entered it.
//
// Counters: algbw = S / t and busbw = algbw · 2(n-1)/n (nccl-tests); floor_us
// and vs_floor = t / floor (1.0 = at the floor); for latency rows also
// std_barrier_us and vs_std_barrier = t / std::barrier episode.

#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "meshsim/meshsim.h"
#include "tools/bench_machine.h"

namespace meshsim {
namespace {

struct PsumRun {
  double psum_seconds = 0;  // for `count` psums
  int wrong_devices = 0;    // whose last result is not all n (a psum of ones)
};

// One launch of `count` timed psums of `inputs[p]` on device p; then every
// device compares its whole last result with the known answer.
PsumRun run_psums(Runtime& rt, const Mesh& mesh, const std::vector<Array>& inputs, int64_t count) {
  const Array expected = Array::full(inputs[0].shape(), DType::kFloat32, mesh.size());
  std::atomic<int> wrong_devices{0};
  PsumRun run;
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const Array& x = inputs[ctx.position()];
    Array out = psum(ctx, x, "x");  // warm-up
    const auto start = bench::Clock::now();
    for (int64_t i = 0; i < count; ++i) out = psum(ctx, x, "x");
    if (ctx.position() == 0) run.psum_seconds = bench::seconds_since(start);
    if (!array_equal(out, expected)) ++wrong_devices;
  });
  run.wrong_devices = wrong_devices.load();
  return run;
}

bool check_results(benchmark::State& state, int wrong_devices) {
  if (wrong_devices == 0) return true;
  state.SkipWithError((std::to_string(wrong_devices) +
                       " devices' psum of ones differs from all n somewhere")
                          .c_str());
  return false;
}

void set_bandwidth_counters(benchmark::State& state, double bytes, int n) {
  const double iterations = static_cast<double>(state.iterations());
  state.counters["algbw"] = benchmark::Counter(bytes * iterations, benchmark::Counter::kIsRate);
  state.counters["busbw"] = benchmark::Counter(bytes * iterations * 2 * (n - 1) / n,
                                               benchmark::Counter::kIsRate);
}

std::vector<Array> ones(int n, int64_t elements) {
  // One input per device (not one shared buffer), as on a real mesh.
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) inputs.push_back(Array::full({elements}, DType::kFloat32, 1.0));
  return inputs;
}

void BM_PsumLatency(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n}});
  const std::vector<Array> inputs = ones(n, 1);

  double psum_seconds = 0;
  int wrong_devices = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const PsumRun run = run_psums(rt, mesh, inputs, state.max_iterations);
    state.SetIterationTime(run.psum_seconds);
    psum_seconds += run.psum_seconds;
    wrong_devices += run.wrong_devices;
  }
  if (!check_results(state, wrong_devices)) return;

  set_bandwidth_counters(state, sizeof(float), n);
  const double psum_us = psum_seconds / static_cast<double>(state.iterations()) * 1e6;
  const cli::MeetingFloor floor = cli::measure_meeting_floor(rt, mesh);
  state.counters["floor_us"] = floor.yield_barrier_us;
  state.counters["vs_floor"] = psum_us / floor.yield_barrier_us;
  if (floor.std_barrier_us) {  // not measured on fibers (MESHSIM_EXEC=fibers)
    state.counters["std_barrier_us"] = *floor.std_barrier_us;
    state.counters["vs_std_barrier"] = psum_us / *floor.std_barrier_us;
  }
}

BENCHMARK(BM_PsumLatency)
    ->ArgName("devices")
    ->Arg(2)
    ->Arg(8)
    ->Arg(64)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// What one context switch costs here: 2 threads pinned to CPU 0 hand it to
// each other with sched_yield. An iteration is one yield of the benchmark
// thread, so a row's time is a round trip (two switches); switch_us is the
// time of one switch: the timed span over the yields both threads made in it.
// With n device threads on c cores, every meeting needs each thread to run
// once, so a meeting costs at least n / c switches per core: on 8 devices and
// 2 cores, 4 x switch_us. (Skipped if CPU 0 is not ours.)
void BM_ContextSwitch(benchmark::State& state) {
  cpu_set_t cpu0;
  CPU_ZERO(&cpu0);
  CPU_SET(0, &cpu0);
  cpu_set_t saved;
  pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved);
  if (pthread_setaffinity_np(pthread_self(), sizeof(cpu0), &cpu0) != 0) {
    state.SkipWithError("cannot run on CPU 0");
    return;
  }
  // The partner counts only while the benchmark thread's loop runs (between
  // `counting` and `stop`), so both counts cover the same span.
  std::atomic<bool> counting{false}, stop{false};
  std::atomic<int64_t> partner_yields{0};
  std::jthread partner([&] {
    pthread_setaffinity_np(pthread_self(), sizeof(cpu0), &cpu0);
    while (!counting.load()) sched_yield();
    int64_t yields = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      sched_yield();
      ++yields;
    }
    partner_yields = yields;
  });
  int64_t yields = 0;
  counting = true;
  const auto start = bench::Clock::now();
  for (auto _ : state) {
    sched_yield();
    ++yields;
  }
  const double seconds = bench::seconds_since(start);
  stop = true;
  partner.join();
  pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
  state.counters["switch_us"] = seconds / static_cast<double>(yields + partner_yields) * 1e6;
}
BENCHMARK(BM_ContextSwitch)->Unit(benchmark::kMicrosecond);

void BM_PsumBandwidth(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int64_t elements = state.range(1);
  const size_t bytes = static_cast<size_t>(elements) * sizeof(float);
  Runtime rt(n);
  const Mesh mesh = Mesh::make({{"x", n}});
  const std::vector<Array> inputs = ones(n, elements);

  double psum_seconds = 0, floor_seconds = 0;
  int wrong_devices = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;
    const PsumRun run = run_psums(rt, mesh, inputs, count);
    state.SetIterationTime(run.psum_seconds);
    psum_seconds += run.psum_seconds;
    // 2·n·S bytes per psum at the memcpy bandwidth of this moment, copying
    // the devices' working set (n·S), as `meshsim bench` does.
    const double gbps = cli::measure_memcpy(cli::memcpy_reference_bytes(n, bytes)).gbps();
    floor_seconds += static_cast<double>(count) * 2.0 * n * static_cast<double>(bytes) / (gbps * 1e9);
    wrong_devices += run.wrong_devices;
  }
  if (!check_results(state, wrong_devices)) return;

  set_bandwidth_counters(state, static_cast<double>(bytes), n);
  state.counters["floor_us"] = floor_seconds / static_cast<double>(state.iterations()) * 1e6;
  state.counters["vs_floor"] = psum_seconds / floor_seconds;
}

constexpr int64_t kLargeFloats = (int64_t{16} << 20) / sizeof(float);  // 16 MiB

BENCHMARK(BM_PsumBandwidth)
    ->ArgNames({"devices", "floats"})
    ->Args({8, kLargeFloats})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace meshsim
