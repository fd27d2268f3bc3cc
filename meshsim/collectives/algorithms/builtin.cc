#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

void register_builtin_algorithms(AlgorithmRegistry& registry) {
  registry.add_builtin(builtin::all_reduce_direct());
  registry.add_builtin(builtin::all_gather_direct());
  registry.add_builtin(builtin::reduce_scatter_direct());
  registry.add_builtin(builtin::all_to_all_direct());
  registry.add_builtin(builtin::ragged_all_to_all_direct());
  registry.add_builtin(builtin::broadcast_direct());
  registry.add_builtin(builtin::barrier_direct());
  register_all_reduce_algorithms(registry);
  register_all_gather_algorithms(registry);
  register_reduce_scatter_algorithms(registry);
  register_all_to_all_algorithms(registry);
  register_ragged_all_to_all_algorithms(registry);
  register_broadcast_algorithms(registry);
  register_barrier_algorithms(registry);
}

}  // namespace meshsim
