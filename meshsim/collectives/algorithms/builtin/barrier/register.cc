#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

void register_barrier_algorithms(AlgorithmRegistry& registry) {
  (void)registry;
}

}  // namespace meshsim
