// barrier dissemination (Hensgen, Finkel, Manber).
//
// Words: n = group size, r = rank. Rounds k = 0..⌈log2 n⌉-1, d = 2^k: send
// an empty message to r+d and receive one from r-d (one zero-byte sendrecv).
// After round k a member has heard, directly or through the chain, from the
// 2^(k+1)-1 members before it; after ⌈log2 n⌉ rounds from all n-1, so no
// member leaves before every member has arrived.
// Cost: ⌈log2 n⌉α.

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<BarrierArgs> barrier_dissemination() {
  Algorithm<BarrierArgs> a;
  a.name = "dissemination";
  a.description = "⌈log2 n⌉ rounds of empty messages to rank + 2^k";
  a.cost_formula = "⌈log2 n⌉α";
  a.cost = [](const CallShape& s) {
    return CostTerms{static_cast<double>(detail::ceil_log2(s.group_size)), 0, 0};
  };
  a.run = [](Communicator& comm, const BarrierArgs&) {
    const int n = comm.size();
    const int r = comm.rank();
    std::byte token{};  // zero bytes move; a valid address all the same
    for (int d = 1; d < n; d *= 2) {
      comm.sendrecv(detail::mod(r + d, n), &token, detail::mod(r - d, n), &token, 0);
    }
  };
  return a;
}

}  // namespace meshsim::builtin
