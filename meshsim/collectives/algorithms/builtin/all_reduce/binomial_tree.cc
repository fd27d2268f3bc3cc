// binomial_tree: reduce to rank 0 along a binomial tree, then broadcast back
// along the same tree, segment by segment.
//
// Words: n = group size, S = bytes per member. Member r's parent is r minus
// its lowest set bit; its children are r + d for d = 1, 2, 4, ... below that
// bit (and below n). The elements go in segments of "segment_bytes". Reduce,
// per segment: a member reduces its children's partials into its own, nearest
// child first (so rank order is kept: no commutativity needed), and sends the
// result to its parent; a leaf sends its input as it is. Rank 0 ends with the
// full reduction. Broadcast, per segment: a member receives the result from
// its parent and sends it to its children, farthest first. Successive segments
// pipeline down and up the tree.
// Cost: 2⌈log2 n⌉α + 2⌈log2 n⌉·Sβ + ⌈log2 n⌉·Sγ (rank 0 receives, reduces and
// sends ⌈log2 n⌉ messages of S); latency-light, for small messages.

#include <bit>
#include <cstring>

#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {
namespace {

void run_binomial_tree(Communicator& comm, const AllReduceArgs& args) {
  if (all_reduce_steps::trivial(comm, args)) return;
  const int n = comm.size();
  const int r = comm.rank();
  // The lowest set bit of r: the distance to the parent (n and beyond for rank 0).
  const int top = r == 0 ? static_cast<int>(std::bit_ceil(static_cast<unsigned>(n))) : (r & -r);
  const bool leaf = r + 1 >= n || top == 1;
  const size_t esize = dtype_size(args.dtype);
  const auto* in = static_cast<const std::byte*>(args.in);
  auto* out = static_cast<std::byte*>(args.out);
  const int64_t segment = all_reduce_steps::segment_elements(comm, args.dtype);

  for (int64_t first = 0; first < args.count; first += segment) {
    const int64_t count = std::min(segment, args.count - first);
    const size_t offset = static_cast<size_t>(first) * esize;
    const size_t bytes = static_cast<size_t>(count) * esize;
    if (leaf) {
      comm.send(r - top, in + offset, bytes);  // n >= 2, so a leaf is never rank 0
      continue;
    }
    if (in != out) std::memcpy(out + offset, in + offset, bytes);
    for (int d = 1; d < top && r + d < n; d *= 2) {
      comm.recv_reduce(r + d, out + offset, count, args.dtype, args.op);
    }
    if (r != 0) comm.send(r - top, out + offset, bytes);
  }
  comm.wait_sends();  // the broadcast overwrites what was sent up
  for (int64_t first = 0; first < args.count; first += segment) {
    const int64_t count = std::min(segment, args.count - first);
    std::byte* const data = out + static_cast<size_t>(first) * esize;
    const size_t bytes = static_cast<size_t>(count) * esize;
    if (r != 0) comm.recv(r - top, data, bytes);
    for (int d = top / 2; d >= 1; d /= 2) {
      if (r + d < n) comm.send(r + d, data, bytes);
    }
  }
}

}  // namespace

Algorithm<AllReduceArgs> all_reduce_binomial_tree() {
  Algorithm<AllReduceArgs> a;
  a.name = "binomial_tree";
  a.description = "binomial-tree reduce to rank 0, then binomial-tree broadcast; pipelined";
  a.cost_formula = "2⌈log2 n⌉α + 2⌈log2 n⌉·Sβ + ⌈log2 n⌉·Sγ";
  a.cost = [](const CallShape& shape) {
    const double levels = detail::ceil_log2(shape.group_size);
    const double s = static_cast<double>(shape.bytes);
    return CostTerms{2 * levels, 2 * levels * s, levels * s};
  };
  a.tunables = {{"segment_bytes", 256 << 10, "bytes per pipelined segment"}};
  a.run = run_binomial_tree;
  return a;
}

}  // namespace meshsim::builtin
