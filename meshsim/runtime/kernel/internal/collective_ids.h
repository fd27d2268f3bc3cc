#pragma once
// CollectiveIds: the collective ids (KernelSpec::set_collective_id) that
// kernels of one Runtime hold, so two kernels never share a barrier
// semaphore. Thread-safe. Internal to runtime/.

#include <mutex>
#include <string>
#include <unordered_map>

namespace meshsim {

class CollectiveIds {
 public:
  // Takes `id` for the kernel `holder` describes; CollectiveIdError naming
  // both kernels if another holds it.
  void claim(int id, const std::string& holder);
  void release(int id);

 private:
  std::mutex mu_;
  std::unordered_map<int, std::string> held_;
};

}  // namespace meshsim
