#pragma once
// Algorithm: one way of running a collective, as the registry keeps it — its
// name, what it does in a line, its cost formula, the preconditions it
// declares, its tunables, and the function that runs it on a Communicator.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "meshsim/collectives/algorithms/algorithm_args.h"
#include "meshsim/collectives/algorithms/communicator.h"

namespace meshsim {

// The terms of an α-β-γ cost: time = α·latency + β·bytes + γ·reduced_bytes,
// for the member on the critical path.
struct CostTerms {
  double latency = 0;        // point-to-point steps (message start-ups)
  double bytes = 0;          // bytes sent (or received) in sequence
  double reduced_bytes = 0;  // bytes combined by the reduction
};

// What the registry knows of a call when it checks preconditions and costs.
struct CallShape {
  Collective collective = Collective::kAllReduce;
  int group_size = 1;
  // Per member: the input's bytes (all_reduce, reduce_scatter: the whole
  // input; all_gather: its block; all_to_all: all n blocks;
  // ragged_all_to_all: the operand; broadcast: the root's message), and the
  // same in elements (ragged_all_to_all: the index arrays' length, n·spd).
  size_t bytes = 0;
  int64_t count = 0;
  ReduceOp op = ReduceOp::kSum;
  int num_axes = 1;           // axes the group spans
  bool index_groups = false;  // axis_index_groups given
  bool equal_groups = true;   // every group the same size
};

// Conditions an algorithm may require of a call; checked on every member
// before it runs (the same verdict everywhere, since members agree on the call).
enum Precondition : uint32_t {
  kNoPrecondition = 0,
  kPowerOfTwoGroup = 1u << 0,  // group size is a power of two
  kDivisibleCount = 1u << 1,   // count (or bytes) divisible by the group size
  kCommutativeOp = 1u << 2,    // the reduction may run in any order (all of ReduceOp's)
  kMultipleAxes = 1u << 3,     // the group spans >= 2 mesh axes, no axis_index_groups
  kEqualGroups = 1u << 4,      // every group has the same size
};
// "power of two group, divisible count": the flags set in `p`, in words.
std::string describe_preconditions(uint32_t preconditions);
// "" when `shape` meets every flag of `preconditions`, else the first unmet
// one with the values that break it ("power of two group: group size is 6").
std::string unmet_precondition(uint32_t preconditions, const CallShape& shape);

struct Tunable {
  std::string name;
  int64_t default_value = 0;
  std::string description;
};

// The part of an algorithm the registry can show without its Args type.
struct AlgorithmInfo {
  std::string name;
  std::string description;  // one line
  std::string cost_formula;  // e.g. "2(n-1)α + 2(n-1)/n·Sβ + (n-1)/n·Sγ"
  std::function<CostTerms(const CallShape&)> cost;
  uint32_t preconditions = kNoPrecondition;
  // A further condition the flags cannot say: returns "" when `shape` is fine,
  // else why not. May be empty.
  std::function<std::string(const CallShape&)> check;
  std::vector<Tunable> tunables;
  // Whether run() reads peers' Args in place (Communicator::peer_args); such
  // calls end with a departure barrier.
  bool reads_peer_args = false;
};

// An algorithm of the collective whose arguments are `Args`.
template <class Args>
struct Algorithm : AlgorithmInfo {
  // Runs on every member of the group with its own Args. Must be
  // deterministic and give every member bitwise identical results.
  std::function<void(Communicator&, const Args&)> run;
};

}  // namespace meshsim
