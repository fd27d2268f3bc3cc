// all_to_all pairwise exchange.
//
// Words: n = group size, r = rank, S = bytes of a member's whole input (n
// blocks of S/n).
// Copy the own block (r) from `in` to `out`. Steps k = 1..n-1: send block
// r+k to member r+k and receive member r-k's block r into slot r-k (one
// sendrecv: at each step the group is a permutation at distance k).
// Cost: (n-1)α + (n-1)/n·Sβ.

#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<AllToAllArgs> all_to_all_pairwise() {
  Algorithm<AllToAllArgs> a;
  a.name = "pairwise";
  a.description = "n-1 steps, step k exchanging one block with the members at distance ±k";
  a.cost_formula = "(n-1)α + (n-1)/n·Sβ";
  a.cost = [](const CallShape& s) {
    const double n = s.group_size;
    return CostTerms{n - 1, (n - 1) / n * static_cast<double>(s.bytes), 0};
  };
  a.run = [](Communicator& comm, const AllToAllArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const size_t b = args.bytes;
    const auto* in = static_cast<const std::byte*>(args.in);
    auto* out = static_cast<std::byte*>(args.out);
    if (b == 0) return;
    std::memcpy(out + r * b, in + r * b, b);
    for (int k = 1; k < n; ++k) {
      const int to = detail::mod(r + k, n);
      const int from = detail::mod(r - k, n);
      comm.sendrecv(to, in + to * b, from, out + from * b, b);
    }
  };
  return a;
}

}  // namespace meshsim::builtin
