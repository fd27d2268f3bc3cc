// broadcast scatter + all-gather (van de Geijn).
//
// Words: n = group size, S = message bytes, v = (rank - root) mod n, the rank
// relative to the root, q = ⌊S/n⌋. The message is n pieces of q bytes
// (piece j at offset j·q) and a tail of S - n·q < n bytes.
// Scatter: down the binomial tree of broadcast binomial_tree (parent
//   v - lowbit(v), children v + m), member v receives the pieces of its
//   subtree [v, v + min(lowbit(v), n-v)) in one transfer, and the tail in a
//   second; it sends each child the pieces of the child's subtree and the
//   tail. The root sends from its own copy of `in` in `out`. Then it waits
//   until its children have read them.
// All-gather: a ring over v, n-1 steps: send piece (v-k) mod n to v+1,
//   receive piece (v-k-1) mod n from v-1 (one sendrecv of q bytes).
// Cost: (⌈log2 n⌉ + n-1)α + 2(n-1)/n·Sβ (the tail adds ⌈log2 n⌉ small
// messages when n does not divide S).

#include <algorithm>
#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<BroadcastArgs> broadcast_scatter_allgather() {
  Algorithm<BroadcastArgs> a;
  a.name = "scatter_allgather";
  a.description = "scatter n pieces down a binomial tree, then ring all-gather them";
  a.cost_formula = "(⌈log2 n⌉ + n-1)α + 2(n-1)/n·Sβ";
  a.cost = [](const CallShape& s) {
    const double n = s.group_size;
    return CostTerms{detail::ceil_log2(s.group_size) + n - 1,
                     2 * (n - 1) / n * static_cast<double>(s.bytes), 0};
  };
  a.run = [](Communicator& comm, const BroadcastArgs& args) {
    const int n = comm.size();
    const size_t bytes = args.bytes;
    auto* out = static_cast<std::byte*>(args.out);
    if (bytes == 0) return;
    const int v = detail::mod(comm.rank() - args.root, n);
    const auto rank_of = [&](int w) { return detail::mod(w + args.root, n); };
    const size_t q = bytes / n;
    const size_t tail = bytes - n * q;
    std::byte* tail_data = out + n * q;
    // The pieces of the subtree rooted at w, whose root-side span is `span`.
    const auto subtree = [&](int w, int span) { return std::min(span, n - w) * q; };

    if (v == 0) std::memcpy(out, args.in, bytes);
    const int top = v == 0 ? 1 << detail::ceil_log2(n) : detail::lowest_bit(v);
    if (v != 0) {
      const int parent = rank_of(v - top);
      if (q > 0) comm.recv(parent, out + v * q, subtree(v, top));
      if (tail > 0) comm.recv(parent, tail_data, tail);
    }
    bool sent = false;
    for (int m = top / 2; m >= 1; m /= 2) {
      const int child = v + m;
      if (child >= n) continue;
      if (q > 0) comm.send(rank_of(child), out + child * q, subtree(child, m));
      if (tail > 0) comm.send(rank_of(child), tail_data, tail);
      sent = true;
    }
    if (q == 0 || n == 1) return;
    // The ring rewrites pieces a child may still be reading.
    if (sent) comm.wait_sends();
    const int next = rank_of(v + 1);
    const int prev = rank_of(v - 1);
    for (int k = 0; k < n - 1; ++k) {
      comm.sendrecv(next, out + detail::mod(v - k, n) * q, prev,
                    out + detail::mod(v - k - 1, n) * q, q);
    }
  };
  return a;
}

}  // namespace meshsim::builtin
