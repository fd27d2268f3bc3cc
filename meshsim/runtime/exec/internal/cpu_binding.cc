#include "meshsim/runtime/exec/internal/cpu_binding.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"
#include "meshsim/runtime/exec/wait_policy.h"

namespace meshsim {
namespace {

// The CPUs of the runtime that confined the calling thread (null: none), and
// the calling thread's count of usable CPUs (0: not read yet).
thread_local const std::vector<int>* confined_to = nullptr;
thread_local int cores_here = 0;

// A CPU set large enough for any CPU number below `cpus`.
class DynamicCpuSet {
 public:
  explicit DynamicCpuSet(int cpus)
      : cpus_(cpus), set_(CPU_ALLOC(cpus)), bytes_(CPU_ALLOC_SIZE(cpus)) {
    if (set_ != nullptr) CPU_ZERO_S(bytes_, set_);
  }
  ~DynamicCpuSet() {
    if (set_ != nullptr) CPU_FREE(set_);
  }
  DynamicCpuSet(const DynamicCpuSet&) = delete;
  DynamicCpuSet& operator=(const DynamicCpuSet&) = delete;

  bool valid() const { return set_ != nullptr; }
  size_t bytes() const { return bytes_; }
  cpu_set_t* get() { return set_; }
  void add(int cpu) { CPU_SET_S(cpu, bytes_, set_); }
  std::vector<int> members() const {
    std::vector<int> out;
    for (int cpu = 0; cpu < cpus_; ++cpu) {
      if (CPU_ISSET_S(cpu, bytes_, set_)) out.push_back(cpu);
    }
    return out;
  }

 private:
  int cpus_;
  cpu_set_t* set_;
  size_t bytes_;
};

// The calling thread's affinity mask; sched_getaffinity fails with EINVAL
// while the set is smaller than the kernel's, so it grows until it fits.
std::vector<int> own_mask() {
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 2) {
    DynamicCpuSet set(cpus);
    if (!set.valid()) break;
    if (sched_getaffinity(0, set.bytes(), set.get()) == 0) return set.members();
    if (errno != EINVAL) break;
  }
  std::vector<int> all;  // no mask to read: every CPU the library knows of
  const int count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int cpu = 0; cpu < count; ++cpu) all.push_back(cpu);
  return all;
}

// Confines the calling thread to `cpus`; false if the system refused.
bool confine(std::span<const int> cpus) {
  DynamicCpuSet set(cpus.empty() ? 1 : *std::max_element(cpus.begin(), cpus.end()) + 1);
  if (!set.valid()) return false;
  for (int cpu : cpus) set.add(cpu);
  return pthread_setaffinity_np(pthread_self(), set.bytes(), set.get()) == 0;
}

std::optional<bool> bind_variable() {
  const char* env = std::getenv("MESHSIM_BIND");
  if (env == nullptr || *env == '\0') return std::nullopt;
  const std::string_view text(env);
  if (text == "cores") return true;
  if (text == "none") return false;
  throw InvalidArgumentError("environment variable MESHSIM_BIND: unknown binding " +
                             quote_text(text) + ": expected 'cores' or 'none'");
}

// Bound threads of the process's live runtimes, by CPU.
class BoundLoads {
 public:
  // Never destroyed: a runtime may outlive static destruction.
  static BoundLoads& process() {
    static BoundLoads* loads = new BoundLoads;
    return *loads;
  }
  // Chooses where `threads` bound threads start among `cpus` (an index),
  // counting them there, under one lock: runtimes made at once still spread.
  size_t place(const std::vector<int>& cpus, int threads, size_t preferred) {
    std::lock_guard lock(mu_);
    std::vector<int> loads(cpus.size());
    for (size_t i = 0; i < cpus.size(); ++i) {
      const auto it = by_cpu_.find(cpus[i]);
      loads[i] = it != by_cpu_.end() ? it->second : 0;
    }
    const size_t first = least_loaded_first(loads, threads, preferred);
    for (int k = 0; k < threads; ++k) ++by_cpu_[cpus[(first + k) % cpus.size()]];
    return first;
  }
  void remove(const std::vector<int>& cpus, int threads, size_t first) {
    std::lock_guard lock(mu_);
    for (int k = 0; k < threads; ++k) {
      const auto it = by_cpu_.find(cpus[(first + k) % cpus.size()]);
      if (--it->second == 0) by_cpu_.erase(it);
    }
  }

 private:
  std::mutex mu_;  // a leaf
  std::unordered_map<int, int> by_cpu_;
};

}  // namespace

size_t least_loaded_first(std::span<const int> loads, int threads, size_t preferred) {
  // Every start puts threads / count threads on each CPU, and one more on
  // each of the `extra` CPUs from the start on: only those differ.
  const size_t count = loads.size();
  const size_t extra = static_cast<size_t>(threads) % count;
  preferred %= count;
  if (extra == 0) return preferred;
  int64_t window = 0;  // the loads of the `extra` CPUs from `start`
  for (size_t k = 0; k < extra; ++k) window += loads[(preferred + k) % count];
  size_t best = preferred;
  int64_t best_window = window;
  for (size_t step = 1; step < count; ++step) {
    const size_t start = (preferred + step) % count;
    window += loads[(start + extra - 1) % count] - loads[(start + count - 1) % count];
    if (window < best_window) {
      best = start;
      best_window = window;
    }
  }
  return best;
}

std::vector<int> usable_cpus() {
  std::vector<int> cpus = confined_to != nullptr ? *confined_to : own_mask();
  cores_here = static_cast<int>(cpus.size());
  return cpus;
}

int usable_cores() {
  if (cores_here == 0) usable_cpus();
  return cores_here;
}

CpuBinding CpuBinding::choose(std::optional<bool> requested, std::optional<int> threads) {
  CpuBinding binding;
  binding.cpus_ = usable_cpus();
  binding.threads_ = threads.value_or(binding.cpu_count());
  const std::optional<bool> wanted = requested ? requested : bind_variable();
  binding.enabled_ =
      wanted.value_or(binding.threads_ >= 2 && binding.threads_ <= binding.cpu_count());
  if (binding.enabled_ && binding.threads_ > 0) {
    const auto here = std::find(binding.cpus_.begin(), binding.cpus_.end(), sched_getcpu());
    const size_t preferred =
        here != binding.cpus_.end() ? static_cast<size_t>(here - binding.cpus_.begin()) : 0;
    binding.first_ = BoundLoads::process().place(binding.cpus_, binding.threads_, preferred);
    binding.counted_ = true;
  }
  return binding;
}

CpuBinding::CpuBinding(CpuBinding&& other) noexcept
    : enabled_(other.enabled_), counted_(std::exchange(other.counted_, false)),
      cpus_(std::move(other.cpus_)), first_(other.first_), threads_(other.threads_) {}

CpuBinding::~CpuBinding() {
  if (counted_) BoundLoads::process().remove(cpus_, threads_, first_);
}

void CpuBinding::enter(int k) const {
  confined_to = &cpus_;
  cores_here = cpu_count();
  const bool bound = enabled_ && k >= 0;
  const size_t mine = (first_ + static_cast<size_t>(std::max(k, 0))) % cpus_.size();
  const bool placed = confine(bound ? std::span<const int>(&cpus_[mine], 1) : cpus_);
  if (bound && !placed) refused_.store(true, std::memory_order_relaxed);
}

}  // namespace meshsim
