// broadcast binomial tree, pipelined in segments.
//
// Words: n = group size, S = message bytes, v = (rank - root) mod n, the rank
// relative to the root. Member v > 0 has parent v - lowbit(v); its children
// are v + m for m = lowbit(v)/2, ..., 1 (the root: m = 2^⌈log2 n⌉/2, ..., 1)
// while v + m < n, largest subtree first. The message moves in segments of
// `segment_bytes`: for each segment a member receives it from its parent into
// `out` and sends it on to each child, so a child forwards segment j while
// its parent still sends later ones. The root sends from `in` and copies it
// to its own `out`. A tree has no cycle, so plain sends never wait on each
// other.
// Cost: ⌈log2 n⌉α + ⌈log2 n⌉·Sβ (the root sends S to each of up to
// ⌈log2 n⌉ children); pipelining overlaps the levels, adding one α per
// extra segment.

#include <algorithm>
#include <cstring>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<BroadcastArgs> broadcast_binomial_tree() {
  Algorithm<BroadcastArgs> a;
  a.name = "binomial_tree";
  a.description = "binomial tree from the root, ⌈log2 n⌉ levels, pipelined in segments";
  a.cost_formula = "⌈log2 n⌉α + ⌈log2 n⌉·Sβ";
  a.cost = [](const CallShape& s) {
    const double levels = detail::ceil_log2(s.group_size);
    return CostTerms{levels, levels * static_cast<double>(s.bytes), 0};
  };
  a.tunables = {
      {"segment_bytes", 256 << 10,
       "bytes forwarded per pipeline step, in whole 64-byte lines (<= 0: the whole message)"}};
  a.run = [](Communicator& comm, const BroadcastArgs& args) {
    const int n = comm.size();
    const size_t bytes = args.bytes;
    auto* out = static_cast<std::byte*>(args.out);
    if (bytes == 0) return;
    const int v = detail::mod(comm.rank() - args.root, n);
    const auto rank_of = [&](int w) { return detail::mod(w + args.root, n); };
    const std::byte* source = out;
    if (v == 0) {
      source = static_cast<const std::byte*>(args.in);
      std::memcpy(out, source, bytes);
    }
    // The Communicator's segments are whole cache lines (at least 64 bytes):
    // a step of the same size is exactly one segment.
    const int64_t tunable = comm.tunable("segment_bytes");
    const size_t segment =
        tunable <= 0
            ? bytes
            : std::min(bytes, std::max<size_t>(64, static_cast<size_t>(tunable) / 64 * 64));
    const int top = v == 0 ? 1 << detail::ceil_log2(n) : detail::lowest_bit(v);
    for (size_t offset = 0; offset < bytes; offset += segment) {
      const size_t len = std::min(segment, bytes - offset);
      if (v != 0) comm.recv(rank_of(v - top), out + offset, len);
      for (int m = top / 2; m >= 1; m /= 2) {
        if (v + m < n) comm.send(rank_of(v + m), source + offset, len);
      }
    }
  };
  return a;
}

}  // namespace meshsim::builtin
