#pragma once
// What the machine can do at all, measured in the same run as what is read
// against it: the memcpy bandwidth every `meshsim bench` table and every
// bandwidth benchmark in bench/ carries, and the cheapest meeting of n threads
// that small-collective latency is read against; plus what the header of
// `meshsim bench` says about the machine.

#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim::cli {

struct MachineInfo {
  std::string hostname;
  int nproc = 0;          // CPUs this process may run on, as `nproc` counts them
  std::string cpu_model;  // /proc/cpuinfo's first "model name", or "unknown"
};
MachineInfo machine_info();

struct MemcpyReference {
  size_t bytes = 0;  // per copy
  int threads = 0;
  int repeats = 0;
  size_t copies_per_run = 0;
  double seconds = 0;  // the median run
  // bytes * copies_per_run / seconds, in GB/s (1e9 B/s); a memcpy of S bytes counts S.
  double gbps() const {
    return seconds > 0 ? static_cast<double>(bytes * copies_per_run) / seconds / 1e9 : 0;
  }
};

// A plain memcpy of `bytes` between two buffers in `threads` contiguous parts:
// the bandwidth every data-moving benchmark (here and in bench/) is read
// against. The helper threads are started once and wait on a barrier between
// runs, so a run times copying, not thread starts. Both buffers are written
// once up front, so page faults are not timed. Allocates 2 x `bytes`.
class MemcpyRunner {
 public:
  MemcpyRunner(size_t bytes, int threads);
  ~MemcpyRunner();
  MemcpyRunner(const MemcpyRunner&) = delete;
  MemcpyRunner& operator=(const MemcpyRunner&) = delete;

  size_t bytes() const { return bytes_; }
  int threads() const { return threads_; }
  // Copies the source to the destination `copies` times; returns wall seconds.
  double run(size_t copies = 1);
  // The destination (for tests: after run(), a copy of the source, which holds
  // byte i = i % 251).
  std::span<const std::byte> destination() const { return {to_.bytes(), bytes_}; }

 private:
  void copy_part(int part);
  void helper_loop(int part);

  size_t bytes_;
  int threads_;
  Array from_, to_;  // Array storage: the allocator the benchmarked code uses
  std::byte* to_bytes_;
  size_t copies_ = 0;
  bool stop_ = false;
  std::barrier<> start_, done_;
  std::vector<std::jthread> helpers_;
};

// The median of `repeats` runs of a MemcpyRunner, each run repeating the copy
// until it has moved kMemcpyRunBytes, so that small sizes measure copying, not
// the barrier.
inline constexpr size_t kMemcpyRunBytes = size_t{16} << 20;
MemcpyReference measure_memcpy(size_t bytes, int threads = 2, int repeats = 5);

// The bytes of the memcpy a collective's floor is read against: the whole
// working set of its `devices`, devices x `size` (at most kMaxReferenceBytes
// per buffer), so that the copy stays in cache exactly when the collective's
// data does. A copy of `size` alone can fit in the last-level cache long after
// devices x size has left it: a 16 MiB copy here ran at 16 or 33 GB/s from run
// to run, while a 16 MiB psum on 8 devices streams 128 MiB from memory.
inline constexpr size_t kMaxReferenceBytes = size_t{512} << 20;
size_t memcpy_reference_bytes(int devices, size_t size);

// The cheapest meeting of `threads` threads: one shared counter; waiters spin
// while every thread can have a core of its own and call sched_yield when
// threads outnumber cores; they never block. A collective whose group holds
// every thread meets at least once, so at small sizes it cannot beat one
// episode of this barrier on the same threads: with more threads than cores,
// an episode costs at least threads / cores context switches per core.
// (Smaller groups meet more cheaply while cores are free: then it is a
// reference, not a bound.)
// On device fibers (fiber mode) the waiters never spin and wait by
// DeviceContext::yield, which runs the worker's other fibers: the cheapest
// meeting of fibers that does not go through meshsim.
class YieldBarrier {
 public:
  explicit YieldBarrier(int threads, ExecutionMode mode = ExecutionMode::kThreads);
  // `ctx`: the calling device's context (required on fibers).
  void arrive_and_wait(const DeviceContext* ctx = nullptr);

 private:
  const int threads_;
  const bool spin_;
  const bool fibers_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<uint32_t> generation_{0};
};

// Episode times of YieldBarrier and std::barrier run by the device threads of
// `runtime` on `mesh` (each the median of 3 launches of about 20 ms): the
// reference a small collective's latency on the same threads is read against.
// In fiber mode std::barrier is not measured (0): it would block a worker
// thread, and with it every fiber queued there.
struct MeetingFloor {
  int threads = 0;
  ExecutionMode execution = ExecutionMode::kThreads;
  int fiber_workers = 0;
  bool bound = false;  // the threads bound to CPUs (Runtime::binds_threads)
  double yield_barrier_us = 0;
  // Threads only: a std::barrier would block a fiber worker (unset on fibers).
  std::optional<double> std_barrier_us;
};
MeetingFloor measure_meeting_floor(Runtime& runtime, const Mesh& mesh);

}  // namespace meshsim::cli
