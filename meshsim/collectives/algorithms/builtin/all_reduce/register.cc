#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

void register_all_reduce_algorithms(AlgorithmRegistry& registry) {
  registry.add_builtin(builtin::all_reduce_ring());
  registry.add_builtin(builtin::all_reduce_bidirectional_ring());
  registry.add_builtin(builtin::all_reduce_recursive_doubling());
  registry.add_builtin(builtin::all_reduce_rabenseifner());
  registry.add_builtin(builtin::all_reduce_binomial_tree());
  registry.add_builtin(builtin::all_reduce_double_binary_tree());
  registry.add_builtin(builtin::all_reduce_hierarchical());
}

}  // namespace meshsim
