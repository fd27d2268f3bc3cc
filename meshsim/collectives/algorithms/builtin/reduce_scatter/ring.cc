// reduce_scatter ring.
//
// Words: n = group size, r = rank, S = bytes of the whole input (n blocks),
// block j = the part member j keeps.
// n-1 steps around the ring. At step k member r sends its partial sum of
// block (r-k-1) mod n to r+1 (at step 0: its own input block) and receives
// r-1's partial sum of block (r-k-2) mod n into a buffer preset to its own
// input block, reducing as it reads (one sendrecv_reduce). At the last step
// the received block is r itself, reduced straight into `out`.
// Operand order, fixed: member j's result is in_j op (in_{j-1} op (... op
// in_{j+1})).
// Cost: (n-1)α + (n-1)/n·Sβ + (n-1)/n·Sγ. Scratch: two blocks.

#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<ReduceScatterArgs> reduce_scatter_ring() {
  Algorithm<ReduceScatterArgs> a;
  a.name = "ring";
  a.description =
      "n-1 steps around the ring, each adding the own block to the partial sum passed on";
  a.cost_formula = "(n-1)α + (n-1)/n·Sβ + (n-1)/n·Sγ";
  a.cost = [](const CallShape& s) {
    const double n = s.group_size;
    const double moved = (n - 1) / n * static_cast<double>(s.bytes);
    return CostTerms{n - 1, moved, moved};
  };
  a.run = [](Communicator& comm, const ReduceScatterArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const size_t b = static_cast<size_t>(args.count) * dtype_size(args.dtype);
    const auto* in = static_cast<const std::byte*>(args.in);
    auto* out = static_cast<std::byte*>(args.out);
    if (b == 0) return;
    if (n == 1) {
      std::memcpy(out, in, b);
      return;
    }
    // Partial sums alternate between two buffers: the one sent at step k is
    // read by r+1 before the sendrecv of step k returns, so step k+1 may
    // overwrite it.
    std::byte* const scratch = comm.scratch(n > 2 ? 2 * b : 0);
    const int next = detail::mod(r + 1, n);
    const int prev = detail::mod(r - 1, n);
    const std::byte* send = in + detail::mod(r - 1, n) * b;
    for (int k = 0; k < n - 1; ++k) {
      const int block = detail::mod(r - k - 2, n);
      std::byte* acc = k == n - 2 ? out : scratch + (k % 2) * b;
      std::memcpy(acc, in + block * b, b);
      comm.sendrecv_reduce(next, send, prev, acc, args.count, args.dtype, args.op);
      send = acc;
    }
  };
  return a;
}

}  // namespace meshsim::builtin
