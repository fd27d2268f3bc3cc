#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

void register_reduce_scatter_algorithms(AlgorithmRegistry& registry) {
  registry.add_builtin(builtin::reduce_scatter_ring());
  registry.add_builtin(builtin::reduce_scatter_recursive_halving());
  registry.add_builtin(builtin::reduce_scatter_pairwise());
}

}  // namespace meshsim
