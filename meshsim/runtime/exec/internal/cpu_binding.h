#pragma once
// CpuBinding: the CPUs of a runtime's threads — the device threads in thread
// mode, the fiber workers in fiber mode, the cores of mpmd_map devices.
//
// When bound (RuntimeOptions::bind_threads), the device threads or the
// workers each get one CPU, as `mpirun --bind-to core` binds ranks. Left to
// the scheduler, two device threads that meet often can share one CPU while
// the other idles. Each meeting is then a pair of context switches, and the
// kernel rarely separates such a pair, since only one of them is runnable at
// a time. A 2-device psum then costs 2.5 us instead of 0.2 us, for the whole
// launch. Bound threads cannot share a CPU. The k-th bound thread goes to
// cpus[(first + k) % count]. `first` is where the process's live runtimes
// bound the fewest threads (least_loaded_first), the CPU the runtime was
// made on when that is as good: runtimes that live at the same time spread
// over the machine instead of piling onto one CPU pair the scheduler cannot
// undo, and the runtimes of several processes start where each was made.
//
// Every other thread of the runtime may run on all of its CPUs: set
// explicitly, since a Linux thread inherits the mask of the thread that
// starts it, and a runtime made in a bound device's body would otherwise
// confine its own threads to that device's one CPU.

#include <atomic>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace meshsim {

// The CPUs a runtime made on the calling thread may use, read anew, in
// increasing order, never empty: the thread's affinity mask (which taskset,
// a cpuset or the program's own sched_setaffinity set), or, on a thread a
// runtime confined (bound to one CPU or not), that runtime's CPUs. Also
// refreshes the calling thread's usable_cores().
std::vector<int> usable_cpus();

// Where `threads` bound threads should start among CPUs already holding
// `loads[i]` bound threads each (i: index into a runtime's CPUs; the k-th
// thread goes to index (first + k) % loads.size()): the start whose threads
// land on the fewest, the first such counting from `preferred` on.
// `loads` is not empty; threads >= 1.
size_t least_loaded_first(std::span<const int> loads, int threads, size_t preferred);

class CpuBinding {
 public:
  // The binding of a runtime made on the calling thread, with `threads`
  // threads to bind (its device threads, or its fiber workers; unset: one
  // per usable CPU): `requested` when set, else the MESHSIM_BIND environment
  // variable ("cores" or "none"; anything else is an InvalidArgumentError),
  // else bound when 2 <= threads <= the usable CPUs. One thread has no peer
  // to share a CPU with, and more threads than CPUs must share them; binding
  // those would only keep the scheduler from balancing.
  static CpuBinding choose(std::optional<bool> requested, std::optional<int> threads);

  bool enabled() const { return enabled_; }
  int cpu_count() const { return static_cast<int>(cpus_.size()); }
  // The threads it was chosen for (`threads`, or one per usable CPU).
  int threads() const { return threads_; }
  // Whether the system refused to bind one of the threads started so far
  // (it then runs where it was); each thread binds itself as it starts.
  bool refused() const { return refused_.load(std::memory_order_relaxed); }

  // Called by each thread of the runtime on itself, first: binds it as the
  // k-th bound thread when the binding is enabled and k >= 0, else lets it
  // run on all the runtime's CPUs. Runtimes made on the thread later use
  // the runtime's CPUs (usable_cpus()). `this` must outlive the thread.
  void enter(int k) const;

  // An enabled binding counts its threads on their CPUs (least_loaded_first)
  // while it lives.
  CpuBinding(CpuBinding&& other) noexcept;
  CpuBinding& operator=(CpuBinding&&) = delete;
  ~CpuBinding();

 private:
  CpuBinding() = default;

  bool enabled_ = false;
  bool counted_ = false;  // its threads are in the process's loads
  std::vector<int> cpus_;
  size_t first_ = 0;  // index into cpus_
  int threads_ = 0;
  mutable std::atomic<bool> refused_{false};
};

}  // namespace meshsim
