#pragma once
// CpuBinding: which CPU each of a runtime's threads is bound to, when they
// are bound at all (RuntimeOptions::bind_threads) — the device threads in
// thread mode, the fiber workers in fiber mode — as `mpirun --bind-to core`
// binds ranks.
//
// Why: left to the scheduler, two device threads that meet often can share
// one CPU while the other idles. Each meeting is then a pair of context
// switches, and the kernel rarely separates such a pair, since only one of
// them is runnable at a time. A 2-device psum then costs 2.5 us instead of
// 0.2 us, for the whole launch. Bound threads cannot share a CPU.
//
// The k-th bound thread goes to usable_cpus()[(first + k) % count], where
// `first` is the CPU the runtime was made on. So the runtimes of several
// processes on a large machine spread over it, instead of all taking its
// first CPUs.

#include <optional>
#include <thread>
#include <vector>

namespace meshsim {

// The CPUs in this process's affinity mask, read once, in increasing order
// (never empty). usable_cores() is their count.
const std::vector<int>& usable_cpus();

class CpuBinding {
 public:
  // Binds nothing.
  CpuBinding() = default;
  // The binding of a runtime with `threads` threads to bind: `requested`
  // when set, else the MESHSIM_BIND environment variable ("cores" or
  // "none"; anything else is an InvalidArgumentError), else bound when
  // 2 <= threads <= usable_cores(). One thread has no peer to share a CPU
  // with, and more threads than CPUs must share them; binding those would
  // only keep the scheduler from balancing.
  static CpuBinding choose(std::optional<bool> requested, int threads);

  bool enabled() const { return enabled_; }
  // Binds `thread` as the k-th bound thread (k >= 0). Does nothing when not
  // enabled. Returns false if the system refused (the thread runs unbound).
  bool bind(std::thread& thread, int k) const;

 private:
  bool enabled_ = false;
  size_t first_ = 0;  // index into usable_cpus()
};

}  // namespace meshsim
