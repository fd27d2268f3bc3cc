// all_gather recursive doubling, with a fold step for non-power-of-two groups.
//
// Words: n = group size, r = rank, S = bytes of one member's block, p = the
// largest power of two <= n, e = n - p (the extra members).
// Fold: extra member p+i sends its block to member i (i < e), which stores it
//   in slot p+i. Members 0..p-1 now each hold the blocks {v} and, for v < e,
//   {p+v}.
// Doubling: rounds d = 1, 2, ..., p/2: member v exchanges with v^d everything
//   it holds: its aligned run of d slots [a, a+d) (one sendrecv, equal sizes)
//   and the matching run of extras' slots [p+a, p+min(a+d, e)), whose length
//   can differ between the partners: equal lengths go by sendrecv, unequal
//   ones one way after the other (lower rank sends first), never a cycle.
// Unfold: member i < e sends the whole result to extra member p+i.
// Cost: power-of-two n: log2(n)α + (n-1)·Sβ. Otherwise (log2 p + 2)α +
// (2n-1)·Sβ on the critical path (fold, doubling, unfold of n·S).

#include <algorithm>
#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {
namespace {

// Exchanges `send_len` bytes for `recv_len` bytes with `peer` (both sides
// compute both lengths alike): one sendrecv when they match, else in rank
// order so that the two one-way transfers never wait for each other.
void exchange(Communicator& comm, int peer, const std::byte* send_data, size_t send_len,
              std::byte* recv_data, size_t recv_len) {
  if (send_len == recv_len) {
    if (send_len > 0) comm.sendrecv(peer, send_data, peer, recv_data, send_len);
    return;
  }
  const auto send = [&] {
    if (send_len > 0) comm.send(peer, send_data, send_len);
  };
  const auto recv = [&] {
    if (recv_len > 0) comm.recv(peer, recv_data, recv_len);
  };
  if (comm.rank() < peer) {
    send();
    recv();
  } else {
    recv();
    send();
  }
}

}  // namespace

Algorithm<AllGatherArgs> all_gather_recursive_doubling() {
  Algorithm<AllGatherArgs> a;
  a.name = "recursive_doubling";
  a.description =
      "log2 n rounds exchanging all held blocks with rank ^ 2^k; fold/unfold for other n";
  a.cost_formula = "log2(n)α + (n-1)·Sβ; non-power-of-two n: (⌊log2 n⌋+2)α + (2n-1)·Sβ";
  a.cost = [](const CallShape& s) {
    const int n = s.group_size;
    const double bytes = static_cast<double>(s.bytes);
    const int p = detail::floor_pow2(n);
    const double rounds = detail::ceil_log2(p);
    if (p == n) return CostTerms{rounds, (n - 1) * bytes, 0};
    return CostTerms{rounds + 2, (2.0 * n - 1) * bytes, 0};
  };
  a.run = [](Communicator& comm, const AllGatherArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const size_t b = args.bytes;
    auto* out = static_cast<std::byte*>(args.out);
    if (b == 0) return;
    const int p = detail::floor_pow2(n);
    const int e = n - p;
    if (r >= p) {  // an extra member: fold in, then receive everything
      comm.send(r - p, args.in, b);
      comm.recv(r - p, out, n * b);
      return;
    }
    std::memcpy(out + r * b, args.in, b);
    if (r < e) comm.recv(r + p, out + (p + r) * b, b);
    // The extras' slots a member of the aligned run [a, a+d) holds.
    const auto extras = [&](int a, int d) {
      return static_cast<size_t>(std::clamp(std::min(a + d, e) - a, 0, d)) * b;
    };
    for (int d = 1; d < p; d *= 2) {
      const int partner = r ^ d;
      const int mine = r & ~(d - 1);
      const int theirs = partner & ~(d - 1);
      comm.sendrecv(partner, out + mine * b, partner, out + theirs * b, d * b);
      exchange(comm, partner, out + (p + mine) * b, extras(mine, d), out + (p + theirs) * b,
               extras(theirs, d));
    }
    if (r < e) comm.send(r + p, out, n * b);
  };
  return a;
}

}  // namespace meshsim::builtin
