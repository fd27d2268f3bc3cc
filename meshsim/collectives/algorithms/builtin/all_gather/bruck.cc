// all_gather Bruck (concatenation by doubling distances; any group size).
//
// Words: n = group size, r = rank, S = bytes of one member's block.
// Work in `out` rotated by r: slot i holds block (r+i) mod n, slot 0 the own
// block. Round k = 0..⌈log2 n⌉-1, d = 2^k: send slots [0, c) to r-d and
// receive slots [d, d+c) from r+d, c = min(d, n-d) (one sendrecv: the
// pattern is a cycle). After the rounds slots [0, n) are full; one in-place
// rotation by r blocks puts block j at slot j.
// Cost: ⌈log2 n⌉α + (n-1)·Sβ, plus a local rotation of n·S bytes.

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
    std::memcpy(out, args.in, b);
    for (int d = 1; d < n; d *= 2) {
      const size_t c = static_cast<size_t>(std::min(d, n - d));
      comm.sendrecv(detail::mod(r - d, n), out, detail::mod(r + d, n), out + d * b, c * b);
    }
    // Slot i holds block (r+i) mod n: rotate right by r blocks.
    std::rotate(out, out + (n - r) * b, out + n * b);
  };
  return a;
}

}  // namespace meshsim::builtin
