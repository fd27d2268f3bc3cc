// all_to_all linear: every send posted at once, then every receive.
//
// Words: n = group size, r = rank, S = bytes of a member's whole input (n
// blocks of S/n).
// Copy the own block from `in` to `out`; post the sends of blocks r+1, ...,
// r+n-1 to their owners (each one descriptor: a send waits only for a free
// slot on its own link, so none waits for a receive); then receive the
// blocks of members r-1, ..., r-n+1 into their slots. No step waits for
// another member's step: all transfers are in flight together.
// Cost: (n-1)α + (n-1)/n·Sβ (n-1 message start-ups, serialised at the member).

#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<AllToAllArgs> all_to_all_linear() {
  Algorithm<AllToAllArgs> a;
  a.name = "linear";
  a.description = "all n-1 sends posted at once, then all n-1 receives";
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
      comm.send(to, in + to * b, b);
    }
    for (int k = 1; k < n; ++k) {
      const int from = detail::mod(r - k, n);
      comm.recv(from, out + from * b, b);
    }
  };
  return a;
}

}  // namespace meshsim::builtin
