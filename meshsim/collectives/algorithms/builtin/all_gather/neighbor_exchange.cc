// all_gather neighbor exchange (Chen et al.), for an even group size.
//
// Words: n = group size (even), r = rank, S = bytes of one member's block.
// Members pair up as (2i, 2i+1). Step 0: each member swaps its own block with
// its pair partner, so every pair holds the two blocks {2i, 2i+1}. Steps
// 1..n/2-1 alternate between the two ring neighbours (odd steps: even ranks
// talk to r-1, odd ranks to r+1; even steps the other way): each member sends
// the pair of blocks it received last step and receives a new pair of blocks
// (one sendrecv of 2·S bytes). An even rank's received pairs walk one way
// around the ring of pairs, an odd rank's the other way, so after n/2 steps
// every member holds all n blocks.
// Cost: (n/2)α + (n-1)·Sβ.

#include <cstring>
#include <string>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<AllGatherArgs> all_gather_neighbor_exchange() {
  Algorithm<AllGatherArgs> a;
  a.name = "neighbor_exchange";
  a.description = "n/2 steps swapping pairs of blocks with alternating ring neighbours, even n";
  a.cost_formula = "(n/2)α + (n-1)·Sβ";
  a.cost = [](const CallShape& s) {
    return CostTerms{s.group_size / 2.0, (s.group_size - 1) * static_cast<double>(s.bytes), 0};
  };
  a.check = [](const CallShape& s) -> std::string {
    if (s.group_size == 1 || s.group_size % 2 == 0) return "";
    return "even group size: group size is " + std::to_string(s.group_size);
  };
  a.run = [](Communicator& comm, const AllGatherArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const size_t b = args.bytes;
    auto* out = static_cast<std::byte*>(args.out);
    if (b == 0) return;
    std::memcpy(out + r * b, args.in, b);
    if (n == 1) return;
    const bool even = r % 2 == 0;
    // neighbor[s]: the peer of steps with parity s; step[s]: how far the
    // received pair moves (in blocks) between steps of parity s.
    const int neighbor[2] = {even ? detail::mod(r + 1, n) : detail::mod(r - 1, n),
                             even ? detail::mod(r - 1, n) : detail::mod(r + 1, n)};
    const int step[2] = {even ? 2 : -2, even ? -2 : 2};
    comm.sendrecv(neighbor[0], out + r * b, neighbor[0], out + neighbor[0] * b, b);
    // The first block of the pair received last, and of the next pair to receive.
    int received[2] = {even ? r : neighbor[0], even ? r : neighbor[0]};
    int send_from = received[0];
    for (int i = 1; i < n / 2; ++i) {
      const int parity = i % 2;
      received[parity] = detail::mod(received[parity] + step[parity], n);
      comm.sendrecv(neighbor[parity], out + send_from * b, neighbor[parity],
                    out + received[parity] * b, 2 * b);
      send_from = received[parity];
    }
  };
  return a;
}

}  // namespace meshsim::builtin
