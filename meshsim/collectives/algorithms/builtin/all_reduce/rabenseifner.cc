// rabenseifner: reduce-scatter by recursive halving, then all-gather by
// recursive doubling.
//
// Words: n = group size, S = bytes per member, p = the largest power of two
// <= n. Non-power-of-two step: the first 2(n-p) members pair up and the even
// one of each pair hands its input to the odd one, which reduces it and
// stands for both (steps.h, PowerOfTwoFold). Halving, for d = p/2, ..., 2, 1:
// each member splits the element range it is responsible for in two, sends the
// half its partner d away keeps and reduces the partner's copy of the half it
// keeps (one sendrecv_reduce; the upper partner keeps the upper half, which
// has the extra element of an odd range). After log2(p) steps each member
// holds 1/p of the elements reduced, each element combined by exactly one
// member. Doubling, for d = 1, 2, ..., p/2: partners swap their reduced
// ranges, so the range doubles each step. Last, the odd members of the pairs
// send the result to their even partners.
// Cost: 2log2(p)α + 2(p-1)/p·Sβ + (p-1)/p·Sγ, plus 2α + 2Sβ + Sγ when n is not
// a power of two: bandwidth-optimal with logarithmic latency. Operands combine
// in halving order, not rank order (commutative op).

#include <array>

#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {
namespace {

// The range a member held before the halving step at distance d, and where
// it was split.
struct Split {
  int64_t begin, middle, end;
};

void run_rabenseifner(Communicator& comm, const AllReduceArgs& args) {
  if (all_reduce_steps::trivial(comm, args)) return;
  const all_reduce_steps::PowerOfTwoFold fold(comm.size(), comm.rank());
  fold.fold(comm, args);
  const int v = fold.vrank();
  if (v >= 0) {
    std::byte* const out = static_cast<std::byte*>(args.out);
    const size_t esize = dtype_size(args.dtype);
    const auto at = [&](int64_t i) { return out + i * static_cast<int64_t>(esize); };
    std::array<Split, 32> splits{};  // by log2(d)
    int64_t begin = 0, end = args.count;
    for (int d = fold.p() / 2, level = detail::floor_log2(fold.p()) - 1; d >= 1;
         d /= 2, --level) {
      const int peer = fold.rank_of(v ^ d);
      const int64_t middle = begin + (end - begin) / 2;
      splits[level] = {begin, middle, end};
      const bool upper = (v & d) != 0;
      const int64_t give_begin = upper ? begin : middle, give_end = upper ? middle : end;
      const int64_t keep_begin = upper ? middle : begin, keep_end = upper ? end : middle;
      all_reduce_steps::exchange(comm, peer, at(give_begin), give_end - give_begin, peer,
                                 at(keep_begin), keep_end - keep_begin, middle - begin,
                                 args.dtype, args.op);
      begin = keep_begin;
      end = keep_end;
    }
    comm.wait_sends();  // the doubling receives into the halves given away
    for (int d = 1, level = 0; d < fold.p(); d *= 2, ++level) {
      const int peer = fold.rank_of(v ^ d);
      const Split& split = splits[level];
      const bool upper = (v & d) != 0;
      const int64_t mine_begin = upper ? split.middle : split.begin;
      const int64_t mine_end = upper ? split.end : split.middle;
      const int64_t theirs_begin = upper ? split.begin : split.middle;
      const int64_t theirs_end = upper ? split.middle : split.end;
      all_reduce_steps::exchange(comm, peer, at(mine_begin), mine_end - mine_begin, peer,
                                 at(theirs_begin), theirs_end - theirs_begin,
                                 split.middle - split.begin, args.dtype, std::nullopt);
    }
  }
  fold.unfold(comm, args);
}

}  // namespace

Algorithm<AllReduceArgs> all_reduce_rabenseifner() {
  Algorithm<AllReduceArgs> a;
  a.name = "rabenseifner";
  a.description =
      "reduce-scatter by recursive halving, all-gather by recursive doubling (any n)";
  a.cost_formula =
      "2log2(p)α + 2(p-1)/p·Sβ + (p-1)/p·Sγ [+ 2α + 2Sβ + Sγ if n ≠ p], p = 2^⌊log2 n⌋";
  a.cost = [](const CallShape& shape) {
    const int n = shape.group_size;
    const int log_p = detail::floor_log2(n);
    const double p = static_cast<double>(1 << log_p);
    const bool folded = n != (1 << log_p);
    const double s = static_cast<double>(shape.bytes);
    return CostTerms{2.0 * log_p + (folded ? 2 : 0), 2 * (p - 1) / p * s + (folded ? 2 * s : 0),
                     (p - 1) / p * s + (folded ? s : 0)};
  };
  a.preconditions = kCommutativeOp;
  a.tunables = {{"segment_bytes", 1 << 20, "bytes per fabric segment of an exchange"}};
  a.run = run_rabenseifner;
  return a;
}

}  // namespace meshsim::builtin
