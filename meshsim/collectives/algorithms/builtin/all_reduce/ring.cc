// ring: reduce-scatter then all-gather around the ring of members.
//
// Words: n = group size, S = bytes per member, v = the member's rank. The
// elements are cut into n near-equal blocks. Reduce-scatter, n - 1 steps: at
// step s the member sends block (v - s) to v + 1 and reduces block (v - s - 1)
// from v - 1 into its output (one sendrecv_reduce, reading the neighbour's
// buffer in place); it then holds block v + 1 reduced over all members.
// All-gather, n - 1 steps: at step s it passes block (v + 1 - s) on to v + 1
// and receives block (v - s) from v - 1. Every block is combined by one member
// and copied to the others, so all members get the same bits. When the count
// is not divisible by n, the one extra element of a block moves as a tail
// after the even part.
// Cost: 2(n-1)α + 2(n-1)/n·Sβ + (n-1)/n·Sγ: bandwidth-optimal, latency
// linear in n. Operands combine in ring order, not rank order (commutative
// op).

#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"

namespace meshsim::builtin {

Algorithm<AllReduceArgs> all_reduce_ring() {
  Algorithm<AllReduceArgs> a;
  a.name = "ring";
  a.description = "reduce-scatter then all-gather around a ring; bandwidth-optimal, 2(n-1) steps";
  a.cost_formula = "2(n-1)α + 2(n-1)/n·Sβ + (n-1)/n·Sγ";
  a.cost = [](const CallShape& shape) {
    const double n = shape.group_size;
    const double s = static_cast<double>(shape.bytes);
    return CostTerms{2 * (n - 1), 2 * (n - 1) / n * s, (n - 1) / n * s};
  };
  a.preconditions = kCommutativeOp;
  a.tunables = {{"segment_bytes", 1 << 20, "bytes per fabric segment of a block transfer"}};
  a.run = [](Communicator& comm, const AllReduceArgs& args) {
    if (all_reduce_steps::trivial(comm, args)) return;
    all_reduce_steps::RingAllReduce(comm, +1, static_cast<const std::byte*>(args.in),
                                    static_cast<std::byte*>(args.out), args.count, args.dtype,
                                    args.op)
        .run();
  };
  return a;
}

}  // namespace meshsim::builtin
