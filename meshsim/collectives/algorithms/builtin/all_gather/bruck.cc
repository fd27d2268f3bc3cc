// all_gather Bruck (concatenation by doubling distances; any group size).
//
// Words: n = group size, r = rank, S = bytes of one member's block.
// Work in a scratch buffer rotated by r: slot i holds block (r+i) mod n,
// slot 0 the own block. Round k = 0..⌈log2 n⌉-1, d = 2^k: send slots [0, c)
// to r-d and receive slots [d, d+c) from r+d, c = min(d, n-d) (one sendrecv:
// the pattern is a cycle). After the rounds slots [0, n) are full; two
// copies put slot i at block (r+i) mod n of `out`.
// Cost: ⌈log2 n⌉α + (n-1)·Sβ, plus a local copy of n·S bytes. Scratch: n·S.

#include <algorithm>
#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<AllGatherArgs> all_gather_bruck() {
  Algorithm<AllGatherArgs> a;
  a.name = "bruck";
  a.description = "⌈log2 n⌉ rounds at doubling distances on a rotated buffer, any n";
  a.cost_formula = "⌈log2 n⌉α + (n-1)·Sβ";
  a.cost = [](const CallShape& s) {
    return CostTerms{static_cast<double>(detail::ceil_log2(s.group_size)),
                     (s.group_size - 1) * static_cast<double>(s.bytes), 0};
  };
  a.run = [](Communicator& comm, const AllGatherArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const size_t b = args.bytes;
    auto* out = static_cast<std::byte*>(args.out);
    if (b == 0) return;
    // Slots [0, c) are sent whole each round, so they must be contiguous:
    // in `out` they would wrap around its end.
    std::byte* const slots = comm.scratch(n * b);
    std::memcpy(slots, args.in, b);
    for (int d = 1; d < n; d *= 2) {
      const size_t c = static_cast<size_t>(std::min(d, n - d));
      comm.sendrecv(detail::mod(r - d, n), slots, detail::mod(r + d, n), slots + d * b,
                    c * b);
    }
    std::memcpy(out + r * b, slots, (n - r) * b);
    std::memcpy(out, slots + (n - r) * b, r * b);
  };
  return a;
}

}  // namespace meshsim::builtin
