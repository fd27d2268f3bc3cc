#include "meshsim/runtime/exec/internal/cpu_binding.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/wait_policy.h"

namespace meshsim {
namespace {

std::vector<int> read_usable_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) {  // no mask to read: every CPU the library knows of
    const int count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    for (int cpu = 0; cpu < count; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

std::optional<bool> bind_variable() {
  const char* env = std::getenv("MESHSIM_BIND");
  if (env == nullptr || *env == '\0') return std::nullopt;
  const std::string_view text(env);
  if (text == "cores") return true;
  if (text == "none") return false;
  throw InvalidArgumentError("environment variable MESHSIM_BIND: unknown binding '" +
                             std::string(text) + "': expected 'cores' or 'none'");
}

}  // namespace

const std::vector<int>& usable_cpus() {
  static const std::vector<int> cpus = read_usable_cpus();
  return cpus;
}

int usable_cores() { return static_cast<int>(usable_cpus().size()); }

CpuBinding CpuBinding::choose(std::optional<bool> requested, int threads) {
  const std::optional<bool> wanted = requested ? requested : bind_variable();
  CpuBinding binding;
  binding.enabled_ = wanted.value_or(threads >= 2 && threads <= usable_cores());
  if (binding.enabled_) {
    const std::vector<int>& cpus = usable_cpus();
    const auto here = std::find(cpus.begin(), cpus.end(), sched_getcpu());
    binding.first_ = here != cpus.end() ? static_cast<size_t>(here - cpus.begin()) : 0;
  }
  return binding;
}

bool CpuBinding::bind(std::thread& thread, int k) const {
  if (!enabled_) return true;
  const std::vector<int>& cpus = usable_cpus();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[(first_ + static_cast<size_t>(k)) % cpus.size()], &one);
  return pthread_setaffinity_np(thread.native_handle(), sizeof(one), &one) == 0;
}

}  // namespace meshsim
