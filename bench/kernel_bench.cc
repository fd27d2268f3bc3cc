// Kernels (runtime/kernel/): remote and local DMAs and semaphore wake-ups,
// each next to the reference it is read against, measured in the same run of
// a shared, noisy machine. The first argument of every kernel row is the
// execution mode (fibers:0 = device threads, fibers:1 = device fibers);
// `workers` (fiber rows only) is RuntimeOptions::fiber_workers, 0 for one
// worker per usable core.
// - BM_RemoteCopy/fibers/bytes/window: device 0 DMAs `bytes` into device 1's
//   buffer (make_async_remote_copy; start, wait_send) again and again, at most
//   `window` copies ahead of device 1, which waits for each (wait_recv) and
//   acknowledges it. Time per copy; bytes_per_second;
//   vs_memcpy = a single-thread memcpy's time / the copy's time, the memcpy
//   (cli::MemcpyRunner, 1 thread, pre-faulted buffers of the same size, the
//   reference `meshsim bench` prints) measured right after each launch, so
//   the ratio comes from one run. Target (issue 12): vs_memcpy >= 0.8.
//   cpu_vs_memcpy, sender_oncpu and receiver_oncpu (set_copy_counters) say
//   whether a low ratio is meshsim's work or the machine's load.
// - BM_LocalCopy/fibers/bytes: make_async_copy between two buffers of one
//   device (start, wait), vs_memcpy as above.
// - BM_Memcpy/bytes: the reference alone, one row per size.
// - BM_SemaphorePingPong/fibers/workers: device 0 signals device 1's
//   semaphore, device 1 waits, then signals device 0's, which waits: the time
//   of a row is half a round trip, the latency from a semaphore_signal to the
//   peer's semaphore_wait returning. p50_us / p90_us / p99_us: percentiles of
//   half the individual round trips (the target, <= 1 us, reads the
//   median); cpus: how many cores the two devices had between them.
// - BM_SemaphorePingPongNoSpin: the thread row with the wait policy's spin
//   phase off (a diagnostic: what the spin costs when the devices share a
//   core).
// - BM_AtomicPingPong: the floor of the thread rows, two plain threads
//   handing a cache line back and forth by spinning on std::atomic (what a
//   wake-up costs when nothing but the hardware is in the way).
//
// Copies run in the spec's copy mode, which the environment may set
// (MESHSIM_KERNEL_COPIES); the numbers of issue 12 are for the default,
// eager copies.
//
// Timing method. Entering a kernel costs two meetings of the devices and the
// allocation of its buffers, far more than one small operation, so kernel
// entry is never timed. Each benchmark run is one launch holding one kernel,
// driven by KeepRunningBatch(max_iterations): the host stores the batch's
// count before the launch and every device reads that same number (the
// launch publishes it to every device), so both devices agree on how many
// copies or signals to expect without a handshake of their own. Inside the
// kernel, an untimed warm-up round (one copy, or one round trip) faults in
// the buffers and proves both devices are running; then device 0 times the
// loop with a steady clock, and the host hands it to SetIterationTime
// (UseManualTime, wall clock). Device 0's loop ends only once device 1 has
// taken everything (the last acknowledgement, or the last pong), so the
// time covers the whole transfer, not just the issuing side.
//
// Run: meshsim_bench_kernel --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "meshsim/meshsim.h"
#include "tools/bench_machine.h"

namespace meshsim {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// The byte at position i of every copied buffer, as cli::MemcpyRunner's source.
uint8_t pattern(size_t i) { return static_cast<uint8_t>(i % 251); }

// Whether a copied buffer holds pattern(), sampled every 4099 bytes.
bool holds_pattern(std::span<const uint8_t> bytes) {
  for (size_t i = 0; i < bytes.size(); i += 4099) {
    if (bytes[i] != pattern(i)) return false;
  }
  return true;
}

// CPU time of the calling thread (in fiber mode: of the worker running the
// calling fiber, which with one fiber per worker is that fiber's).
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Wall and CPU seconds of one timed loop on a device.
struct Span {
  bench::Clock::time_point wall_start;
  double cpu_start = 0;
  void start() {
    cpu_start = thread_cpu_seconds();
    wall_start = bench::Clock::now();
  }
  // Adds this loop's wall and CPU seconds.
  void stop(double& wall, double& cpu) const {
    wall += bench::seconds_since(wall_start);
    cpu += thread_cpu_seconds() - cpu_start;
  }
};

RuntimeOptions options_for(const benchmark::State& state, bool with_workers = false) {
  RuntimeOptions options;
  options.execution = state.range(0) != 0 ? ExecutionMode::kFibers : ExecutionMode::kThreads;
  if (with_workers && state.range(0) != 0) options.fiber_workers = static_cast<int>(state.range(1));
  return options;
}

void label(benchmark::State& state, const Runtime& rt, const std::string& extra = "") {
  std::string text = rt.execution() == ExecutionMode::kFibers
                         ? "fibers on " + std::to_string(rt.fiber_workers()) + " workers"
                         : std::string("threads");
  if (rt.binds_threads()) text += ", bound to CPUs";
  if (!extra.empty()) text += ", " + extra;
  state.SetLabel(text);
}

// What the copy rows accumulate over their batches.
struct CopyTimes {
  double copy_wall = 0, copy_cpu = 0;      // device 0's timed loops
  double receiver_cpu = 0;                 // device 1 meanwhile (remote copies)
  double memcpy_wall = 0, memcpy_cpu = 0;  // the reference, on the host thread
};

// Counters shared by the copy rows:
// - vs_memcpy: memcpy wall time / copy wall time, the ratio the issue's
//   target reads (>= 0.8 for a remote copy);
// - cpu_vs_memcpy: the same with the CPU time of the copying thread (device 0;
//   the host thread for memcpy): insensitive to the machine's load, it says
//   whether the copying thread does more work than a memcpy;
// - sender_oncpu: device 0's CPU time / its wall time. Below ~0.95 the
//   copying device was descheduled (the machine is busy) and vs_memcpy
//   measures the scheduler more than meshsim;
// - receiver_oncpu (remote copies): device 1's CPU time / device 0's wall
//   time, the core the receiver burns waiting (spinning, then yielding).
void set_copy_counters(benchmark::State& state, size_t bytes, const CopyTimes& t,
                       bool remote) {
  const double total = static_cast<double>(bytes) * static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(total));
  state.counters["memcpy_GBps"] = total / t.memcpy_wall / 1e9;
  state.counters["vs_memcpy"] = t.memcpy_wall / t.copy_wall;
  state.counters["cpu_vs_memcpy"] = t.memcpy_cpu / t.copy_cpu;
  state.counters["sender_oncpu"] = t.copy_cpu / t.copy_wall;
  if (remote) state.counters["receiver_oncpu"] = t.receiver_cpu / t.copy_wall;
}

// One run of the memcpy reference for `count` copies, timed on the host.
void run_reference(cli::MemcpyRunner& reference, int64_t count, CopyTimes& t) {
  const double cpu = thread_cpu_seconds();
  t.memcpy_wall += reference.run(static_cast<size_t>(count));
  t.memcpy_cpu += thread_cpu_seconds() - cpu;
}

// ---------------------------------------------------------------------------
// Remote copy.
//
// Flow control: copies run eagerly (start() moves the bytes and signals both
// semaphores before it returns), so without it device 0 could run far ahead
// of device 1 and device 1's receive semaphore would pass the most a
// semaphore holds (1 GiB: 64 copies of 16 MiB). Device 1 therefore
// acknowledges every copy it took on device 0's `ack` semaphore, and device 0
// keeps at most `window` copies unacknowledged: the acknowledgement of copy
// i - window is awaited before copy i starts, so its latency hides behind
// the copies in between. window:2 is double buffering, as Pallas pipelines
// do: device 0 stalls whenever device 1 has not run for two copies (on a
// busy machine, when it lost its core). window:16 measures the copy's
// throughput with the receiver's scheduling mostly out of the way. A real
// kernel would give each copy in flight its own destination slot; here all
// write the one destination buffer (device 1 never reads it while copies are
// running; it checks it once at the end), so the copy's working set is the
// memcpy reference's: one source and one destination of `bytes`.

void BM_RemoteCopy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(1));
  const int64_t window = state.range(2);
  Runtime rt(2, options_for(state));
  const Mesh mesh = Mesh::make({{"x", 2}});
  KernelSpec spec("remote_copy");
  const BufferRef src = spec.buffer({static_cast<int64_t>(bytes)}, DType::kUInt8);
  const BufferRef dst = spec.buffer({static_cast<int64_t>(bytes)}, DType::kUInt8);
  const DmaSemaphore send = spec.dma_semaphore();
  const DmaSemaphore recv = spec.dma_semaphore();
  const Semaphore ack = spec.semaphore();

  cli::MemcpyRunner memcpy_reference(bytes, /*threads=*/1);
  memcpy_reference.run(1);  // faults in its destination

  CopyTimes times;
  std::atomic<int> wrong{0};
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;  // read by both devices
    double seconds = 0, cpu = 0, receiver_cpu = 0;
    rt.launch(mesh, [&](DeviceContext& ctx) {
      run_kernel(ctx, spec, [&](KernelContext& k) {
        Span span;
        if (k.device_id() == 0) {
          const auto out = k.write<uint8_t>(src);
          for (size_t i = 0; i < out.size(); ++i) out[i] = pattern(i);
          AsyncCopy copy = k.make_async_remote_copy(src, dst, send, recv, 1);
          // Warm-up: faults in device 1's destination pages; once acknowledged,
          // device 1 is running.
          copy.start();
          copy.wait_send();
          k.semaphore_wait(ack);
          span.start();
          for (int64_t i = 0; i < count; ++i) {
            if (i >= window) k.semaphore_wait(ack);  // copy i - window was taken
            copy.start();
            copy.wait_send();
          }
          k.semaphore_wait(ack, std::min(count, window));  // every copy was taken
          span.stop(seconds, cpu);
        } else {
          // The receiver's own descriptor for the same destination.
          AsyncCopy copy = k.make_async_remote_copy(src, dst, send, recv, 0);
          copy.wait_recv();  // the warm-up copy
          k.semaphore_signal(ack, 1, 0);
          span.start();
          for (int64_t i = 0; i < count; ++i) {
            copy.wait_recv();
            k.semaphore_signal(ack, 1, 0);
          }
          double unused = 0;
          span.stop(unused, receiver_cpu);
          if (!holds_pattern(k.read<uint8_t>(dst))) wrong.fetch_add(1);
        }
      });
    });
    state.SetIterationTime(seconds);
    times.copy_wall += seconds;
    times.copy_cpu += cpu;
    times.receiver_cpu += receiver_cpu;
    run_reference(memcpy_reference, count, times);
  }
  if (wrong.load() != 0) {
    state.SkipWithError("device 1's buffer does not hold what device 0 copied");
    return;
  }
  set_copy_counters(state, bytes, times, /*remote=*/true);
  label(state, rt);
}
BENCHMARK(BM_RemoteCopy)
    ->ArgNames({"fibers", "bytes", "window"})
    ->ArgsProduct({{0, 1}, {kMiB, 16 * kMiB}, {2, 16}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------
// Local copy: one device, make_async_copy from one buffer to another, waited
// for before the next starts (its one semaphore never holds more than one
// copy).
void BM_LocalCopy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(1));
  Runtime rt(1, options_for(state));
  const Mesh mesh = Mesh::make({{"x", 1}});
  KernelSpec spec("local_copy");
  const BufferRef src = spec.buffer({static_cast<int64_t>(bytes)}, DType::kUInt8);
  const BufferRef dst = spec.buffer({static_cast<int64_t>(bytes)}, DType::kUInt8);
  const DmaSemaphore sem = spec.dma_semaphore();

  cli::MemcpyRunner memcpy_reference(bytes, /*threads=*/1);
  memcpy_reference.run(1);

  CopyTimes times;
  std::atomic<int> wrong{0};
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;
    double seconds = 0, cpu = 0;
    rt.launch(mesh, [&](DeviceContext& ctx) {
      run_kernel(ctx, spec, [&](KernelContext& k) {
        const auto out = k.write<uint8_t>(src);
        for (size_t i = 0; i < out.size(); ++i) out[i] = pattern(i);
        AsyncCopy copy = k.make_async_copy(src, dst, sem);
        copy.start();  // warm-up: faults in the destination
        copy.wait();
        Span span;
        span.start();
        for (int64_t i = 0; i < count; ++i) {
          copy.start();
          copy.wait();
        }
        span.stop(seconds, cpu);
        if (!holds_pattern(k.read<uint8_t>(dst))) wrong.fetch_add(1);
      });
    });
    state.SetIterationTime(seconds);
    times.copy_wall += seconds;
    times.copy_cpu += cpu;
    run_reference(memcpy_reference, count, times);
  }
  if (wrong.load() != 0) {
    state.SkipWithError("the destination does not hold what was copied");
    return;
  }
  set_copy_counters(state, bytes, times, /*remote=*/false);
  label(state, rt);
}
BENCHMARK(BM_LocalCopy)
    ->ArgNames({"fibers", "bytes"})
    ->ArgsProduct({{0, 1}, {kMiB, 16 * kMiB}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// The reference alone: one iteration = one single-thread memcpy of `bytes`
// between pre-faulted buffers.
void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  cli::MemcpyRunner copy(bytes, /*threads=*/1);
  copy.run(1);
  while (state.KeepRunningBatch(state.max_iterations)) {
    state.SetIterationTime(copy.run(static_cast<size_t>(state.max_iterations)));
  }
  state.SetBytesProcessed(static_cast<int64_t>(bytes) * state.iterations());
}
BENCHMARK(BM_Memcpy)
    ->ArgName("bytes")
    ->Arg(kMiB)
    ->Arg(16 * kMiB)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// ---------------------------------------------------------------------------
// Semaphore ping-pong.
//
// Per round trip device 0 reads the clock once (after its wait returns) into
// a preallocated array: the differences are the individual round trips, whose
// halves give the percentile counters (of the last, largest batch). The row's
// time is the whole loop over 2 x count, the mean half round trip (it
// includes that one clock read per round trip, ~20 ns here). `cpus`: both
// devices' CPU time over the loop's wall time; ~2 when each device had a core
// of its own and spun, ~1 or less when they shared one (a busy machine), when
// every wake-up costs a context switch (fibers on one worker: that worker's
// CPU time, ~1).
constexpr int64_t kMaxSamples = int64_t{1} << 22;

void set_latency_counters(benchmark::State& state, std::vector<double>& half_trips_us) {
  if (half_trips_us.empty()) return;
  const auto at = [&](double q) {
    const size_t i = std::min(half_trips_us.size() - 1,
                              static_cast<size_t>(q * static_cast<double>(half_trips_us.size())));
    std::nth_element(half_trips_us.begin(), half_trips_us.begin() + static_cast<std::ptrdiff_t>(i),
                     half_trips_us.end());
    return half_trips_us[i];
  };
  state.counters["p50_us"] = at(0.50);
  state.counters["p90_us"] = at(0.90);
  state.counters["p99_us"] = at(0.99);
}

void ping_pong(benchmark::State& state, const RuntimeOptions& options, const std::string& extra) {
  Runtime rt(2, options);
  const Mesh mesh = Mesh::make({{"x", 2}});
  KernelSpec spec("ping_pong");
  const Semaphore sem = spec.semaphore();  // each device's own: pinged there
  std::vector<bench::Clock::time_point> stamps;
  std::vector<double> half_trips_us;
  double wall_total = 0, cpu_total = 0;
  while (state.KeepRunningBatch(state.max_iterations)) {
    const int64_t count = state.max_iterations;  // read by both devices
    const int64_t samples = std::min(count, kMaxSamples);
    stamps.assign(static_cast<size_t>(samples) + 1, bench::Clock::time_point{});
    double seconds = 0;
    double cpu[2] = {0, 0};
    std::thread::id thread[2];
    rt.launch(mesh, [&](DeviceContext& ctx) {
      run_kernel(ctx, spec, [&](KernelContext& k) {
        Span span;
        double wall = 0, mine = 0;
        if (k.device_id() == 0) {
          k.semaphore_signal(sem, 1, 1);  // warm-up round trip: device 1 is running
          k.semaphore_wait(sem);
          span.start();
          stamps[0] = span.wall_start;
          for (int64_t i = 0; i < count; ++i) {
            k.semaphore_signal(sem, 1, 1);
            k.semaphore_wait(sem);
            if (i < samples) stamps[static_cast<size_t>(i) + 1] = bench::Clock::now();
          }
          span.stop(wall, mine);
          seconds = wall;
        } else {
          k.semaphore_wait(sem);  // the warm-up
          k.semaphore_signal(sem, 1, 0);
          span.start();
          for (int64_t i = 0; i < count; ++i) {
            k.semaphore_wait(sem);
            k.semaphore_signal(sem, 1, 0);
          }
          span.stop(wall, mine);
        }
        cpu[k.device_id()] = mine;
        thread[k.device_id()] = std::this_thread::get_id();
      });
    });
    state.SetIterationTime(seconds / 2);  // count round trips = 2 x count wake-ups
    wall_total += seconds;
    // Fibers on one worker share its thread, whose CPU time each measured.
    cpu_total += thread[0] == thread[1] ? cpu[0] : cpu[0] + cpu[1];
    half_trips_us.clear();
    for (size_t i = 1; i < stamps.size(); ++i) {
      half_trips_us.push_back(
          std::chrono::duration<double, std::micro>(stamps[i] - stamps[i - 1]).count() / 2);
    }
  }
  set_latency_counters(state, half_trips_us);
  state.counters["cpus"] = cpu_total / wall_total;
  label(state, rt, extra);
}

void BM_SemaphorePingPong(benchmark::State& state) {
  ping_pong(state, options_for(state, /*with_workers=*/true), "half a round trip");
}
BENCHMARK(BM_SemaphorePingPong)
    ->ArgNames({"fibers", "workers"})
    ->Args({0, 0})
    ->Args({1, 0})  // one worker per core: the devices on different workers
    ->Args({1, 1})  // one worker: the devices switch on one thread
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);

// Diagnostic: device threads with RuntimeOptions::wait_policy set to skip the
// spin phase (yield at once, as the adaptive policy does when threads
// outnumber usable_cores()). On a busy machine the two device threads often
// share one core although usable_cores() is 2; the adaptive policy then
// spins its full 4 us before each yield, and this row shows what a wake-up
// costs without that.
void BM_SemaphorePingPongNoSpin(benchmark::State& state) {
  RuntimeOptions options;
  options.execution = ExecutionMode::kThreads;
  options.wait_policy = WaitPolicy{.spin_ns = 0, .yield_ns = 100'000};
  ping_pong(state, options, "no spin, half a round trip");
}
BENCHMARK(BM_SemaphorePingPongNoSpin)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Two plain threads, each spinning on its own cache-line-aligned atomic until
// the other bumps it: the same ping-pong with nothing but coherence traffic.
// One iteration = one round trip, timed alone (two clock reads around it).
void BM_AtomicPingPong(benchmark::State& state) {
  struct alignas(64) Line {
    std::atomic<int64_t> value{0};
  };
  Line ping, pong, stop;
  std::thread peer([&] {
    int64_t seen = 0;
    for (;;) {
      int64_t now;
      while ((now = ping.value.load(std::memory_order_acquire)) == seen) {
        if (stop.value.load(std::memory_order_relaxed) != 0) return;
      }
      seen = now;
      pong.value.store(now, std::memory_order_release);
    }
  });
  int64_t sent = 0;
  const auto round_trip = [&] {
    ping.value.store(++sent, std::memory_order_release);
    while (pong.value.load(std::memory_order_acquire) != sent) {
    }
  };
  for (int i = 0; i < 1000; ++i) round_trip();  // warm-up: the peer is running
  std::vector<double> half_trips_us;
  for (auto _ : state) {
    const auto start = bench::Clock::now();
    round_trip();
    const double us =
        std::chrono::duration<double, std::micro>(bench::Clock::now() - start).count();
    state.SetIterationTime(us / 2 / 1e6);
    if (static_cast<int64_t>(half_trips_us.size()) < kMaxSamples) half_trips_us.push_back(us / 2);
  }
  stop.value.store(1, std::memory_order_relaxed);
  peer.join();
  set_latency_counters(state, half_trips_us);
  state.SetLabel("two spinning threads, half a round trip");
}
BENCHMARK(BM_AtomicPingPong)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace meshsim
