#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

void register_ragged_all_to_all_algorithms(AlgorithmRegistry& registry) {
  registry.add_builtin(builtin::ragged_all_to_all_pairwise());
  registry.add_builtin(builtin::ragged_all_to_all_linear());
}

}  // namespace meshsim
