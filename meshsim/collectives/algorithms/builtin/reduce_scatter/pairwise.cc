// reduce_scatter pairwise exchange.
//
// Words: n = group size, r = rank, S = bytes of the whole input (n blocks),
// block j = the part member j keeps.
// `out` starts as the own input block r. Steps k = 1..n-1: send input block
// (r+k) mod n to its owner r+k and receive block r of member r-k, reduced
// into `out` as it is read (one sendrecv_reduce: every member sends and
// receives at distance k, a permutation of the group).
// Operand order, fixed: member j's result is ((in_j op in_{j-1}) op in_{j-2})
// ... op in_{j+1}.
// Cost: (n-1)α + (n-1)/n·Sβ + (n-1)/n·Sγ. No scratch.

#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<ReduceScatterArgs> reduce_scatter_pairwise() {
  Algorithm<ReduceScatterArgs> a;
  a.name = "pairwise";
  a.description = "n-1 steps, step k sending each block straight to its owner at distance k";
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
    if (b == 0) return;
    std::memcpy(args.out, in + r * b, b);
    for (int k = 1; k < n; ++k) {
      const int to = detail::mod(r + k, n);
      comm.sendrecv_reduce(to, in + to * b, detail::mod(r - k, n), args.out, args.count, args.dtype,
                           args.op);
    }
  };
  return a;
}

}  // namespace meshsim::builtin
