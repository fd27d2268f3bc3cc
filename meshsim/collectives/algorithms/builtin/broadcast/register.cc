#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

void register_broadcast_algorithms(AlgorithmRegistry& registry) {
  registry.add_builtin(builtin::broadcast_binomial_tree());
  registry.add_builtin(builtin::broadcast_scatter_allgather());
}

}  // namespace meshsim
