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
// - BM_PsumTracePaired: the 8-byte psum off and on in alternating launches,
//   with the median ratio of the pairs (on_over_off): the number to read.
// Tracing off here against the same benchmark built without tracing (the
// commit before it) is the cost of the disabled path: run both binaries in
// interleaved rounds and compare medians.
// Run: meshsim_bench_trace --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <vector>

#include "bench_util.h"
#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

constexpr int kDevices = 8;

// Launches of `calls` psums of `count` float32 elements on 8 devices, traced
// or not, on one Runtime.
class PsumLoop {
 public:
  explicit PsumLoop(int64_t count) : ones_(Array::full({count}, DType::kFloat32, 1.0)) {}

  // Device 0's wall time for `calls` psums after a warm-up psum, in one
  // launch; false in `ok` if a result or the event count was wrong.
  double time(int64_t calls, bool on) {
    double seconds = 0;
    rt_.launch(
        mesh_,
        [&](DeviceContext& ctx) {
          Array out = psum(ctx, ones_, "x");
          const auto start = bench::Clock::now();
          for (int64_t i = 0; i < calls; ++i) out = psum(ctx, ones_, "x");
          if (ctx.position() == 0) seconds = bench::seconds_since(start);
          if (out.at<float>({0}) != static_cast<float>(kDevices)) ok_ = false;
        },
        {.time = nullptr,
         .record = &record_,
         .trace = on,
         .trace_capacity = static_cast<size_t>(calls) + 1});
    if (on && record_.events.size() != static_cast<size_t>(kDevices * (calls + 1))) ok_ = false;
    return seconds;
  }
  bool ok() const { return ok_.load(); }

 private:
  Runtime rt_{kDevices};
  const Mesh mesh_ = Mesh::make({{"x", kDevices}});
  const Array ones_;
  LaunchRecord record_;
  std::atomic<bool> ok_{true};
};

void run(benchmark::State& state, int64_t count) {
  PsumLoop loop(count);
  const bool on = state.range(0) != 0;
  // Steady state: a device keeps its trace's memory from one traced launch
  // to the next, so the first launch (which touches it first) is untimed.
  loop.time(state.max_iterations, on);
  while (state.KeepRunningBatch(state.max_iterations)) {
    state.SetIterationTime(loop.time(state.max_iterations, on));
  }
  if (!loop.ok()) state.SkipWithError("wrong result or event count");
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

// The 8-byte psum untraced and traced in alternation on one Runtime: each
// iteration is a pair of launches of 2000 psums (off, then on), and the
// counter on_over_off is the median over the pairs of on / off. A machine
// whose speed drifts (this VM's fiber runs are fast or slow for minutes at
// a time) slows both halves of a pair alike, where the separate rows above
// may each catch a different period. The time shown is per psum, both halves.
void BM_PsumTracePaired(benchmark::State& state) {
  constexpr int64_t kCalls = 2000;
  PsumLoop loop(2);
  loop.time(kCalls, false);
  loop.time(kCalls, true);
  std::vector<double> ratios;
  for (auto _ : state) {
    const double off = loop.time(kCalls, false);
    const double on = loop.time(kCalls, true);
    ratios.push_back(on / off);
    state.SetIterationTime((off + on) / (2 * kCalls));
  }
  if (!loop.ok()) state.SkipWithError("wrong result or event count");
  std::sort(ratios.begin(), ratios.end());
  state.counters["on_over_off"] = ratios[ratios.size() / 2];
  state.counters["pairs"] = static_cast<double>(ratios.size());
}
BENCHMARK(BM_PsumTracePaired)->UseManualTime()->Iterations(25)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace meshsim
