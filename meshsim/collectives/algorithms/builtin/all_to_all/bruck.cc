// all_to_all Bruck (any group size).
//
// Words: n = group size, r = rank, S = bytes of a member's whole input (n
// blocks of S/n).
// Rotate: slot i of a scratch buffer takes block (r+i) mod n of `in` (the
//   block meant for member r+i). A block in slot i must travel distance i.
// Rounds k = 0..⌈log2 n⌉-1, d = 2^k: pack the slots whose index has bit k
//   set, send them to r+d and receive the same slots from r-d (one sendrecv
//   of m_k blocks, m_k = #{i < n : bit k of i}), unpack into those slots.
//   After the rounds slot i holds the block member r-i meant for r.
// Unrotate: out slot (r-i) mod n = slot i.
// Cost: ⌈log2 n⌉α + Σ_k m_k·S/n β (about ⌈log2 n⌉·S/2·β), plus local packing.
// Scratch: S + 2·⌊n/2⌋·S/n.

#include <algorithm>
#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {
namespace {

// How many i in [0, n) have bit `bit` (a power of two) set.
int64_t with_bit(int n, int bit) {
  const int64_t period = 2 * int64_t{bit};
  return n / period * bit + std::max<int64_t>(0, n % period - bit);
}

}  // namespace

Algorithm<AllToAllArgs> all_to_all_bruck() {
  Algorithm<AllToAllArgs> a;
  a.name = "bruck";
  a.description = "⌈log2 n⌉ rounds, round k forwarding the blocks whose distance has bit k, any n";
  a.cost_formula = "⌈log2 n⌉α + Σ_k m_k·S/n·β, m_k = #{i < n : bit k of i} (≈ ⌈log2 n⌉·S/2·β)";
  a.cost = [](const CallShape& s) {
    const int n = s.group_size;
    double blocks = 0;
    for (int d = 1; d < n; d *= 2) blocks += static_cast<double>(with_bit(n, d));
    return CostTerms{static_cast<double>(detail::ceil_log2(n)),
                     blocks * static_cast<double>(s.bytes) / n, 0};
  };
  a.run = [](Communicator& comm, const AllToAllArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const size_t b = args.bytes;
    const auto* in = static_cast<const std::byte*>(args.in);
    auto* out = static_cast<std::byte*>(args.out);
    if (b == 0) return;
    size_t most = 0;  // the largest round, in blocks
    for (int d = 1; d < n; d *= 2) most = std::max(most, static_cast<size_t>(with_bit(n, d)));
    std::byte* const scratch = comm.scratch((n + 2 * most) * b);
    std::byte* slots = scratch;
    std::byte* packed = slots + n * b;
    std::byte* unpacked = packed + most * b;
    for (int i = 0; i < n; ++i) std::memcpy(slots + i * b, in + detail::mod(r + i, n) * b, b);
    for (int d = 1; d < n; d *= 2) {
      size_t m = 0;
      for (int i = d; i < n; ++i) {
        if (i & d) std::memcpy(packed + m++ * b, slots + i * b, b);
      }
      comm.sendrecv(detail::mod(r + d, n), packed, detail::mod(r - d, n), unpacked, m * b);
      m = 0;
      for (int i = d; i < n; ++i) {
        if (i & d) std::memcpy(slots + i * b, unpacked + m++ * b, b);
      }
    }
    for (int i = 0; i < n; ++i) std::memcpy(out + detail::mod(r - i, n) * b, slots + i * b, b);
  };
  return a;
}

}  // namespace meshsim::builtin
