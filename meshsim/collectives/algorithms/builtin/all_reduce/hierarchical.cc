// hierarchical: all-reduce composed over mesh axes — reduce-scatter along the
// inner axis, all-reduce along the outer ones, all-gather along the inner.
//
// Words: n = group size = m·k, m = size of the group's last (inner) axis, k =
// the product of the other (outer) axes, S = bytes per member. The group must
// span at least two mesh axes (no axis_index_groups). 1. Reduce-scatter on the
// inner sub-group (ring, see ring.cc): each member ends with 1/m of the
// elements reduced over its inner group. 2. All-reduce of that block on the
// outer sub-group (ring): the members of an outer group hold the same block
// index, so the block is then reduced over all n members. 3. All-gather on the
// inner sub-group (ring). Each element is combined by one member per phase and
// copied to the others, so all members get the same bits. On a real machine
// the inner axis is the fast one (within a node), and only S/m crosses the
// outer links.
// Cost: 2(m-1)α + 2(k-1)α + 2(m-1)/m·Sβ + 2(k-1)/(km)·Sβ + (m-1)/m·Sγ +
// (k-1)/(km)·Sγ. The cost function sees only n, so it takes m = k = √n.
// Operands combine in ring order (commutative op).

#include <cmath>
#include <span>
#include <string>

#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"

namespace meshsim::builtin {
namespace {

void run_hierarchical(Communicator& comm, const AllReduceArgs& args) {
  if (all_reduce_steps::trivial(comm, args)) return;
  const std::span<const std::string> axes = comm.axes();
  Communicator inner = comm.subgroup(axes.back());
  Communicator outer = comm.subgroup(axes.first(axes.size() - 1));
  auto* out = static_cast<std::byte*>(args.out);
  all_reduce_steps::RingAllReduce inner_ring(inner, +1, static_cast<const std::byte*>(args.in),
                                             out, args.count, args.dtype, args.op);
  for (int s = 0; s < inner_ring.steps(); ++s) inner_ring.reduce_scatter_step(s);
  inner.wait_sends();
  std::byte* const block = out + inner_ring.owned_begin() * dtype_size(args.dtype);
  all_reduce_steps::RingAllReduce(outer, +1, block, block, inner_ring.owned_size(), args.dtype,
                                  args.op)
      .run();
  outer.wait_sends();
  for (int s = 0; s < inner_ring.steps(); ++s) inner_ring.all_gather_step(s);
  // The sub-communicators share the call's pending sends and memory: the
  // front-end's wait covers their sends too.
}

}  // namespace

Algorithm<AllReduceArgs> all_reduce_hierarchical() {
  Algorithm<AllReduceArgs> a;
  a.name = "hierarchical";
  a.description =
      "ring reduce-scatter on the inner axis, ring all-reduce on the outer axes, ring all-gather "
      "on the inner";
  a.cost_formula =
      "2(m-1)α + 2(k-1)α + 2(m-1)/m·Sβ + 2(k-1)/(km)·Sβ + (m-1)/m·Sγ + (k-1)/(km)·Sγ, "
      "m = inner axis size, k = n/m";
  a.cost = [](const CallShape& shape) {
    // CallShape has no axis sizes: assume a square split.
    const double n = shape.group_size;
    const double m = std::sqrt(n), k = n / m;
    const double s = static_cast<double>(shape.bytes);
    return CostTerms{2 * (m - 1) + 2 * (k - 1), 2 * (m - 1) / m * s + 2 * (k - 1) / (k * m) * s,
                     (m - 1) / m * s + (k - 1) / (k * m) * s};
  };
  a.preconditions = kMultipleAxes | kCommutativeOp;
  a.tunables = {{"segment_bytes", 1 << 20, "bytes per fabric segment of a block transfer"}};
  a.run = run_hierarchical;
  return a;
}

}  // namespace meshsim::builtin
