#pragma once
// The built-in algorithms, one function per algorithm, each defined in its own
// file under algorithms/builtin/<collective>/ with a prose block stating its
// words and its cost. register_builtin_algorithms adds them all: direct first
// (it is the default), then each collective's register.cc adds the rest.

#include "meshsim/collectives/algorithms/algorithm.h"

namespace meshsim {

class AlgorithmRegistry;

void register_builtin_algorithms(AlgorithmRegistry& registry);

// One per collective, in builtin/<collective>/register.cc.
void register_all_reduce_algorithms(AlgorithmRegistry& registry);
void register_all_gather_algorithms(AlgorithmRegistry& registry);
void register_reduce_scatter_algorithms(AlgorithmRegistry& registry);
void register_all_to_all_algorithms(AlgorithmRegistry& registry);
void register_ragged_all_to_all_algorithms(AlgorithmRegistry& registry);
void register_broadcast_algorithms(AlgorithmRegistry& registry);
void register_barrier_algorithms(AlgorithmRegistry& registry);

namespace builtin {

// "direct" of every collective: shared memory, zero copy. Front-ends run it
// natively, so these entries carry its description and cost, and no run
// function (builtin/direct.cc).
Algorithm<AllReduceArgs> all_reduce_direct();
Algorithm<AllGatherArgs> all_gather_direct();
Algorithm<ReduceScatterArgs> reduce_scatter_direct();
Algorithm<AllToAllArgs> all_to_all_direct();
Algorithm<RaggedAllToAllArgs> ragged_all_to_all_direct();
Algorithm<BroadcastArgs> broadcast_direct();
Algorithm<BarrierArgs> barrier_direct();

// all_reduce (builtin/all_reduce/)
Algorithm<AllReduceArgs> all_reduce_ring();
Algorithm<AllReduceArgs> all_reduce_bidirectional_ring();
Algorithm<AllReduceArgs> all_reduce_recursive_doubling();
Algorithm<AllReduceArgs> all_reduce_rabenseifner();
Algorithm<AllReduceArgs> all_reduce_binomial_tree();
Algorithm<AllReduceArgs> all_reduce_double_binary_tree();
Algorithm<AllReduceArgs> all_reduce_hierarchical();

// all_gather (builtin/all_gather/)
Algorithm<AllGatherArgs> all_gather_ring();
Algorithm<AllGatherArgs> all_gather_recursive_doubling();
Algorithm<AllGatherArgs> all_gather_bruck();
Algorithm<AllGatherArgs> all_gather_neighbor_exchange();

// reduce_scatter (builtin/reduce_scatter/)
Algorithm<ReduceScatterArgs> reduce_scatter_ring();
Algorithm<ReduceScatterArgs> reduce_scatter_recursive_halving();
Algorithm<ReduceScatterArgs> reduce_scatter_pairwise();

// all_to_all (builtin/all_to_all/)
Algorithm<AllToAllArgs> all_to_all_pairwise();
Algorithm<AllToAllArgs> all_to_all_bruck();
Algorithm<AllToAllArgs> all_to_all_linear();

// ragged_all_to_all (builtin/ragged_all_to_all/)
Algorithm<RaggedAllToAllArgs> ragged_all_to_all_pairwise();
Algorithm<RaggedAllToAllArgs> ragged_all_to_all_linear();

// broadcast (builtin/broadcast/)
Algorithm<BroadcastArgs> broadcast_binomial_tree();
Algorithm<BroadcastArgs> broadcast_scatter_allgather();

// barrier (builtin/barrier/)
Algorithm<BarrierArgs> barrier_dissemination();

}  // namespace builtin
}  // namespace meshsim
