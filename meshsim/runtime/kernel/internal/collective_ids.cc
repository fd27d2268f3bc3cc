#include "meshsim/runtime/kernel/internal/collective_ids.h"

#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

void CollectiveIds::claim(int id, const std::string& holder) {
  std::lock_guard lock(mu_);
  const auto [it, inserted] = held_.emplace(id, holder);
  if (!inserted) {
    throw CollectiveIdError(holder + " claims collective id " + std::to_string(id) + ", which " +
                            it->second + " holds: two kernels running at once would share its "
                            "barrier semaphores");
  }
}

void CollectiveIds::release(int id) {
  std::lock_guard lock(mu_);
  held_.erase(id);
}

}  // namespace meshsim
