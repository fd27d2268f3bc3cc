// recursive_doubling: log2(n) exchanges of the whole vector.
//
// Words: n = group size, S = bytes per member, p = the largest power of two
// <= n. Non-power-of-two step: the first 2(n-p) members pair up and the even
// one of each pair hands its input to the odd one, which reduces it and
// stands for both (steps.h, PowerOfTwoFold). Then, for d = 1, 2, 4, ..., p/2,
// each of the p members swaps its whole partial with the member d away (one
// sendrecv, into a scratch buffer) and both combine the two partials with the
// lower member's partial first, so both compute the same bits. Last, the odd
// members of the pairs send the result to their even partners.
// Cost: log2(p)α + log2(p)·Sβ + log2(p)·Sγ, plus 2α + 2Sβ + Sγ when n is not a
// power of two: latency-optimal, for small messages.

#include <cstring>
#include <utility>

#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {
namespace {

void run_recursive_doubling(Communicator& comm, const AllReduceArgs& args) {
  if (all_reduce_steps::trivial(comm, args)) return;
  const all_reduce_steps::PowerOfTwoFold fold(comm.size(), comm.rank());
  fold.fold(comm, args);
  const int v = fold.vrank();
  if (v >= 0) {
    const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
    std::byte* mine = static_cast<std::byte*>(args.out);
    std::byte* theirs = comm.scratch(bytes);
    for (int d = 1; d < fold.p(); d *= 2) {
      const int peer = fold.rank_of(v ^ d);
      comm.sendrecv(peer, mine, peer, theirs, bytes);
      if ((v & d) == 0) {
        reduce_elements(args.op, args.dtype, mine, theirs, args.count);
      } else {
        reduce_elements(args.op, args.dtype, theirs, mine, args.count);
        std::swap(mine, theirs);  // the peer has read `mine`: it is free
      }
    }
    if (mine != args.out) std::memcpy(args.out, mine, bytes);
  }
  fold.unfold(comm, args);
}

}  // namespace

Algorithm<AllReduceArgs> all_reduce_recursive_doubling() {
  Algorithm<AllReduceArgs> a;
  a.name = "recursive_doubling";
  a.description = "log2(n) pairwise exchanges of the whole vector; latency-optimal, small messages";
  a.cost_formula = "log2(p)·(α + Sβ + Sγ) [+ 2α + 2Sβ + Sγ if n ≠ p], p = 2^⌊log2 n⌋";
  a.cost = [](const CallShape& shape) {
    const int n = shape.group_size;
    const double steps = detail::floor_log2(n);
    const bool folded = (n & (n - 1)) != 0;
    const double s = static_cast<double>(shape.bytes);
    return CostTerms{steps + (folded ? 2 : 0), (steps + (folded ? 2 : 0)) * s,
                     (steps + (folded ? 1 : 0)) * s};
  };
  // The fold combines the odd member's partial first.
  a.preconditions = kCommutativeOp;
  a.tunables = {{"segment_bytes", 1 << 20, "bytes per fabric segment of an exchange"}};
  a.run = run_recursive_doubling;
  return a;
}

}  // namespace meshsim::builtin
