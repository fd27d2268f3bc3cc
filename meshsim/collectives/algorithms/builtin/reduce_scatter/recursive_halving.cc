// reduce_scatter recursive halving, with a fold step for non-power-of-two
// groups.
//
// Words: n = group size, r = rank, S = bytes of the whole input (n blocks),
// block j = the part member j keeps, p = the largest power of two <= n,
// e = n - p.
// Fold: for i < e, member 2i sends its whole input to 2i+1, which reduces it
//   into a copy of its own (acc = in_{2i+1} op in_{2i}); 2i then waits for its
//   block. The p members left, numbered v (2i+1 is v = i, r >= 2e is v = r-e),
//   each own a run of blocks: v < e owns {2v, 2v+1}, the others {v+e}.
// Halving: rounds d = p/2, ..., 1: member v exchanges with v^d; of the runs
//   of the 2d members [g, g+2d) it has summed so far, it sends the half
//   holding the partner's blocks and reduces the partner's copy of its own
//   half into acc (sendrecv_reduce when the halves are equal in size, else
//   the two one-way transfers in rank order, never a cycle).
// Unfold: v < e sends block 2v to member 2v; every member copies its block
//   to `out`.
// Operand order, fixed per block: the fold's pair, then the halving's tree.
// Cost: power-of-two n: log2(n)α + (n-1)/n·Sβ + (n-1)/n·Sγ. Otherwise
// (log2 p + 2)α + (S + (p-1)/p·S + S/n)β + (S + (p-1)/p·S)γ. Scratch: S.

#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<ReduceScatterArgs> reduce_scatter_recursive_halving() {
  Algorithm<ReduceScatterArgs> a;
  a.name = "recursive_halving";
  a.description = "log2 n rounds halving the summed range with rank ^ 2^k; fold/unfold for other n";
  a.cost_formula =
      "log2(n)α + (n-1)/n·Sβ + (n-1)/n·Sγ; non-power-of-two n, p = 2^⌊log2 n⌋: "
      "(log2 p+2)α + (S + (p-1)/p·S + S/n)β + (S + (p-1)/p·S)γ";
  a.cost = [](const CallShape& s) {
    const int n = s.group_size;
    const int p = detail::floor_pow2(n);
    const double bytes = static_cast<double>(s.bytes);
    const double rounds = detail::ceil_log2(p);
    const double halving = (p - 1.0) / p * bytes;
    if (p == n) return CostTerms{rounds, halving, halving};
    return CostTerms{rounds + 2, bytes + halving + bytes / n, bytes + halving};
  };
  a.run = [](Communicator& comm, const ReduceScatterArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const int64_t count = args.count;
    const size_t b = static_cast<size_t>(count) * dtype_size(args.dtype);
    if (b == 0) return;
    const int p = detail::floor_pow2(n);
    const int e = n - p;
    if (r < 2 * e && r % 2 == 0) {  // folded into r+1
      comm.send(r + 1, args.in, n * b);
      comm.recv(r + 1, args.out, b);
      return;
    }
    std::byte* const scratch = comm.scratch(n * b);
    std::byte* acc = scratch;
    std::memcpy(acc, args.in, n * b);
    if (r < 2 * e) comm.recv_reduce(r - 1, acc, n * count, args.dtype, args.op);

    const int v = r < 2 * e ? r / 2 : r - e;
    const auto first_block = [&](int w) { return w < e ? 2 * w : w + e; };
    const auto rank_of = [&](int w) { return w < e ? 2 * w + 1 : w + e; };
    bool sent = false;  // a plain send from acc is outstanding
    for (int d = p / 2; d >= 1; d /= 2) {
      const int group = v & ~(2 * d - 1);
      const bool lower = (v & d) == 0;
      const int keep_begin = first_block(lower ? group : group + d);
      const int keep_end = first_block(lower ? group + d : group + 2 * d);
      const int give_begin = first_block(lower ? group + d : group);
      const int give_end = first_block(lower ? group + 2 * d : group + d);
      const int peer = rank_of(v ^ d);
      const int64_t keep = (keep_end - keep_begin) * count;
      const int64_t give = (give_end - give_begin) * count;
      std::byte* keep_data = acc + keep_begin * b;
      const std::byte* give_data = acc + give_begin * b;
      if (keep == give) {
        comm.sendrecv_reduce(peer, give_data, peer, keep_data, keep, args.dtype, args.op);
      } else if (lower) {  // unequal halves: the lower member sends first
        comm.send(peer, give_data, give * dtype_size(args.dtype));
        comm.recv_reduce(peer, keep_data, keep, args.dtype, args.op);
        sent = true;
      } else {
        comm.recv_reduce(peer, keep_data, keep, args.dtype, args.op);
        comm.send(peer, give_data, give * dtype_size(args.dtype));
        sent = true;
      }
    }
    if (v < e) {
      comm.send(r - 1, acc + (r - 1) * b, b);
      sent = true;
    }
    std::memcpy(args.out, acc + r * b, b);
    if (sent) comm.wait_sends();  // acc is freed on return
  };
  return a;
}

}  // namespace meshsim::builtin
