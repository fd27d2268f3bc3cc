// all_gather ring.
//
// Words: n = group size, r = rank, S = bytes of one member's block.
// Each member copies its own block into its slot of `out`. Then n-1 steps:
// at step k it sends block (r-k) mod n to r+1 and receives block (r-k-1)
// mod n from r-1 into its slot (one sendrecv on the ring). The block sent at
// step k is the one received at step k-1, so after n-1 steps every member
// holds every block; a slot is written once, so a block being read is never
// overwritten.
// Cost: (n-1)α + (n-1)·Sβ on every member.

#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<AllGatherArgs> all_gather_ring() {
  Algorithm<AllGatherArgs> a;
  a.name = "ring";
  a.description = "n-1 steps around the ring, each passing on the block received last";
  a.cost_formula = "(n-1)α + (n-1)·Sβ";
  a.cost = [](const CallShape& s) {
    const double steps = s.group_size - 1;
    return CostTerms{steps, steps * static_cast<double>(s.bytes), 0};
  };
  a.run = [](Communicator& comm, const AllGatherArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const size_t b = args.bytes;
    auto* out = static_cast<std::byte*>(args.out);
    if (b == 0) return;
    std::memcpy(out + r * b, args.in, b);
    const int next = detail::mod(r + 1, n);
    const int prev = detail::mod(r - 1, n);
    for (int k = 0; k < n - 1; ++k) {
      const int send_block = detail::mod(r - k, n);
      const int recv_block = detail::mod(r - k - 1, n);
      comm.sendrecv(next, out + send_block * b, prev, out + recv_block * b, b);
    }
  };
  return a;
}

}  // namespace meshsim::builtin
