#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

void register_all_gather_algorithms(AlgorithmRegistry& registry) {
  registry.add_builtin(builtin::all_gather_ring());
  registry.add_builtin(builtin::all_gather_recursive_doubling());
  registry.add_builtin(builtin::all_gather_bruck());
  registry.add_builtin(builtin::all_gather_neighbor_exchange());
}

}  // namespace meshsim
