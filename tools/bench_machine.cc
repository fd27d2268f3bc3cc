#include "tools/bench_machine.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <type_traits>
#include <thread>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim::cli {

MachineInfo machine_info() {
  MachineInfo info;
  char host[256] = {};
  info.hostname = gethostname(host, sizeof(host) - 1) == 0 ? host : "unknown";
  info.nproc = usable_cores();
  info.cpu_model = "unknown";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      const size_t start = line.find_first_not_of(" \t", colon + 1);
      if (start != std::string::npos) info.cpu_model = line.substr(start);
    }
    break;
  }
  return info;
}

namespace {

int checked_threads(int threads) {
  if (threads < 1) {
    throw InvalidArgumentError("memcpy reference: threads = " + std::to_string(threads) +
                               ", must be at least 1");
  }
  return threads;
}

}  // namespace

MemcpyRunner::MemcpyRunner(size_t bytes, int threads)
    : bytes_(bytes),
      threads_(checked_threads(threads)),
      from_(Array::empty({static_cast<int64_t>(bytes)}, DType::kUInt8)),
      to_(Array::zeros({static_cast<int64_t>(bytes)}, DType::kUInt8)),
      to_bytes_(to_.mutable_bytes()),
      start_(threads),
      done_(threads) {
  std::byte* const from = from_.mutable_bytes();
  for (size_t i = 0; i < bytes; ++i) from[i] = static_cast<std::byte>(i % 251);
  try {
    for (int part = 1; part < threads; ++part) {
      helpers_.emplace_back([this, part] { helper_loop(part); });
    }
  } catch (...) {
    // A thread could not start: the destructor will not run, so release the
    // helpers already waiting (the missing ones drop out of the barrier) and
    // let helpers_ join them.
    stop_ = true;
    for (int missing = threads - 1 - static_cast<int>(helpers_.size()); missing > 0; --missing) {
      start_.arrive_and_drop();
    }
    start_.arrive_and_wait();
    helpers_.clear();
    throw;
  }
}

MemcpyRunner::~MemcpyRunner() {
  stop_ = true;  // published to the helpers by the barrier
  start_.arrive_and_wait();
}

void MemcpyRunner::copy_part(int part) {
  const size_t begin = bytes_ * part / threads_;
  const size_t end = bytes_ * (part + 1) / threads_;
  const std::byte* const from = from_.bytes();
  std::byte* const to = to_bytes_;
  for (size_t c = 0; c < copies_; ++c) {
    std::memcpy(to + begin, from + begin, end - begin);
    asm volatile("" ::: "memory");  // every copy happens: none is a dead store
  }
}

void MemcpyRunner::helper_loop(int part) {
  for (;;) {
    start_.arrive_and_wait();
    if (stop_) return;
    copy_part(part);
    done_.arrive_and_wait();
  }
}

double MemcpyRunner::run(size_t copies) {
  using Clock = std::chrono::steady_clock;
  copies_ = copies;
  const Clock::time_point start = Clock::now();
  start_.arrive_and_wait();
  copy_part(0);
  done_.arrive_and_wait();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

MemcpyReference measure_memcpy(size_t bytes, int threads, int repeats) {
  const size_t copies = std::max<size_t>(1, kMemcpyRunBytes / std::max<size_t>(bytes, 1));
  MemcpyRunner runner(bytes, threads);
  runner.run(1);  // warm: caches, TLB, helper threads running
  std::vector<double> runs(repeats);
  for (double& seconds : runs) seconds = runner.run(copies);
  std::sort(runs.begin(), runs.end());
  return {.bytes = bytes,
          .threads = threads,
          .repeats = repeats,
          .copies_per_run = copies,
          .seconds = runs[runs.size() / 2]};
}

size_t memcpy_reference_bytes(int devices, size_t size) {
  const size_t per_device = std::max<size_t>(size, 1);
  const auto n = static_cast<size_t>(std::max(devices, 1));
  return per_device > kMaxReferenceBytes / n ? kMaxReferenceBytes : per_device * n;
}

YieldBarrier::YieldBarrier(int threads, ExecutionMode mode)
    : threads_(threads),
      spin_(mode == ExecutionMode::kThreads && threads <= usable_cores()),
      fibers_(mode == ExecutionMode::kFibers) {}

void YieldBarrier::arrive_and_wait(const DeviceContext* ctx) {
  if (fibers_ && ctx == nullptr) {
    throw InvalidArgumentError("YieldBarrier on fibers needs the device's context to yield");
  }
  const uint32_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads_) {
    arrived_.store(0, std::memory_order_relaxed);  // nobody arrives before the release below
    generation_.fetch_add(1, std::memory_order_release);
    return;
  }
  while (generation_.load(std::memory_order_acquire) == generation) {
    if (spin_) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (fibers_) {
      ctx->yield();
    } else {
      sched_yield();
    }
  }
}

namespace {

// Microseconds per episode of `barrier` over `episodes` episodes, run by the
// devices of `mesh` in one launch, timed by the first device after one
// untimed episode (so all devices are running).
template <class Barrier>
double episode_us(Runtime& runtime, const Mesh& mesh, int episodes) {
  using Clock = std::chrono::steady_clock;
  std::optional<Barrier> made;
  if constexpr (std::is_same_v<Barrier, YieldBarrier>) {
    made.emplace(mesh.size(), runtime.execution());
  } else {
    made.emplace(mesh.size());
  }
  Barrier& barrier = *made;
  const auto meet = [&](DeviceContext& ctx) {
    if constexpr (std::is_same_v<Barrier, YieldBarrier>) {
      barrier.arrive_and_wait(&ctx);
    } else {
      barrier.arrive_and_wait();
    }
  };
  double seconds = 0;
  runtime.launch(mesh, [&](DeviceContext& ctx) {
    meet(ctx);
    const Clock::time_point start = Clock::now();
    for (int e = 0; e < episodes; ++e) meet(ctx);
    if (ctx.position() == 0) seconds = std::chrono::duration<double>(Clock::now() - start).count();
  });
  return seconds / episodes * 1e6;
}

// The median of 3 launches of about 20 ms each (at least 10 episodes).
template <class Barrier>
double median_episode_us(Runtime& runtime, const Mesh& mesh) {
  const double probe_us = episode_us<Barrier>(runtime, mesh, 10);
  const int episodes = std::max(10, static_cast<int>(20'000 / std::max(probe_us, 0.05)));
  std::vector<double> runs;
  for (int run = 0; run < 3; ++run) runs.push_back(episode_us<Barrier>(runtime, mesh, episodes));
  std::sort(runs.begin(), runs.end());
  return runs[1];
}

}  // namespace

MeetingFloor measure_meeting_floor(Runtime& runtime, const Mesh& mesh) {
  const bool fibers = runtime.execution() == ExecutionMode::kFibers;
  return {.threads = mesh.size(),
          .execution = runtime.execution(),
          .fiber_workers = runtime.fiber_workers(),
          .bound = runtime.binds_threads(),
          .yield_barrier_us = median_episode_us<YieldBarrier>(runtime, mesh),
          .std_barrier_us =
              fibers ? std::nullopt
                     : std::optional(median_episode_us<std::barrier<>>(runtime, mesh))};
}

}  // namespace meshsim::cli
