// bidirectional_ring: two rings in opposite directions, each over half the
// elements.
//
// Words: n = group size, S = bytes per member. The first half of the elements
// runs the ring algorithm (see ring.cc) sending to rank + 1, the second half
// sending to rank - 1; the two rings advance step by step together (step s of
// one, then step s of the other), reduce-scatter first, then all-gather. Each
// link direction carries half the bytes of a single ring.
// Cost: 2(n-1)α + (n-1)/n·Sβ + (n-1)/n·Sγ on full-duplex links, where both
// directions of a link run at once. On meshsim's fabric a member runs the two
// rings' transfers of a step one after the other (sendrecv blocks), so its
// wall time is close to ring's; in virtual time the two sends of a step
// depart together (Communicator::concurrent), as on hardware. Operands
// combine in ring order (commutative op).

#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"

namespace meshsim::builtin {

Algorithm<AllReduceArgs> all_reduce_bidirectional_ring() {
  Algorithm<AllReduceArgs> a;
  a.name = "bidirectional_ring";
  a.description = "two rings in opposite directions, each reducing half of the elements";
  a.cost_formula = "2(n-1)α + (n-1)/n·Sβ + (n-1)/n·Sγ";
  a.cost = [](const CallShape& shape) {
    const double n = shape.group_size;
    const double s = static_cast<double>(shape.bytes);
    return CostTerms{2 * (n - 1), (n - 1) / n * s, (n - 1) / n * s};
  };
  a.preconditions = kCommutativeOp;
  a.tunables = {{"segment_bytes", 1 << 20, "bytes per fabric segment of a block transfer"}};
  a.run = [](Communicator& comm, const AllReduceArgs& args) {
    if (all_reduce_steps::trivial(comm, args)) return;
    const auto* in = static_cast<const std::byte*>(args.in);
    auto* out = static_cast<std::byte*>(args.out);
    const int64_t half = args.count / 2;
    const size_t offset = static_cast<size_t>(half) * dtype_size(args.dtype);
    all_reduce_steps::RingAllReduce forward(comm, +1, in, out, half, args.dtype, args.op);
    all_reduce_steps::RingAllReduce backward(comm, -1, in + offset, out + offset,
                                             args.count - half, args.dtype, args.op);
    // In virtual time both rings' sends of a step depart together.
    for (int s = 0; s < forward.steps(); ++s) {
      const Communicator::Concurrent together = comm.concurrent();
      forward.reduce_scatter_step(s);
      backward.reduce_scatter_step(s);
    }
    comm.wait_sends();
    for (int s = 0; s < forward.steps(); ++s) {
      const Communicator::Concurrent together = comm.concurrent();
      forward.all_gather_step(s);
      backward.all_gather_step(s);
    }
  };
  return a;
}

}  // namespace meshsim::builtin
