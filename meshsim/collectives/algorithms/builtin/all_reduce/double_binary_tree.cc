// double_binary_tree: two binary trees, each reducing and broadcasting half
// of the elements, built so that no member is an inner node of both (NCCL's
// double binary tree).
//
// Words: n = group size, S = bytes per member. Tree A is the binary heap over
// the ranks (root 0; children of q are 2q + 1 and 2q + 2); tree B is the same
// heap over the mirrored ranks (place n-1-r), so A's inner nodes (the lower
// half of the ranks) are B's leaves and the other way round. Tree A carries
// the first half of the elements, tree B the second, in segments of
// "segment_bytes", the two trees' segments interleaved. Reduce, per segment: a
// member reduces its children's partials into its own and sends the result to
// its parent (a leaf sends its input as it is); the root ends with the full
// reduction. Broadcast, per segment: receive from the parent, send to the
// children. Successive segments pipeline through the trees.
// Cost: 2⌈log2 n⌉α + 2Sβ + Sγ with many segments (each member receives and
// sends at most S per phase, as inner node of one tree). Operands combine in
// heap order, not rank order (commutative op).

#include <algorithm>
#include <cstring>

#include "meshsim/collectives/algorithms/builtin/all_reduce/internal/steps.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {
namespace {

// One of the two trees, seen from one member, over elements [first, end).
struct Tree {
  int n, place;
  bool mirrored;
  int64_t first, end;
  int rank_at(int q) const { return mirrored ? n - 1 - q : q; }
  int parent() const { return rank_at((place - 1) / 2); }
  int child(int i) const { return 2 * place + 1 + i < n ? rank_at(2 * place + 1 + i) : -1; }
  int64_t segments(int64_t segment) const { return (end - first + segment - 1) / segment; }
};

void reduce_segment(Communicator& comm, const AllReduceArgs& args, const Tree& tree,
                    int64_t begin, int64_t count) {
  const size_t esize = dtype_size(args.dtype);
  const auto* in = static_cast<const std::byte*>(args.in) + begin * esize;
  auto* out = static_cast<std::byte*>(args.out) + begin * esize;
  const size_t bytes = static_cast<size_t>(count) * esize;
  if (tree.child(0) < 0) {
    comm.send(tree.parent(), in, bytes);  // a leaf is never the root, since n >= 2
    return;
  }
  if (in != out) std::memcpy(out, in, bytes);
  for (int i = 0; i < 2; ++i) {
    if (tree.child(i) >= 0) comm.recv_reduce(tree.child(i), out, count, args.dtype, args.op);
  }
  if (tree.place != 0) comm.send(tree.parent(), out, bytes);
}

void broadcast_segment(Communicator& comm, const AllReduceArgs& args, const Tree& tree,
                       int64_t begin, int64_t count) {
  const size_t esize = dtype_size(args.dtype);
  auto* out = static_cast<std::byte*>(args.out) + begin * esize;
  const size_t bytes = static_cast<size_t>(count) * esize;
  if (tree.place != 0) comm.recv(tree.parent(), out, bytes);
  for (int i = 0; i < 2; ++i) {
    if (tree.child(i) >= 0) comm.send(tree.child(i), out, bytes);
  }
}

void run_double_binary_tree(Communicator& comm, const AllReduceArgs& args) {
  if (all_reduce_steps::trivial(comm, args)) return;
  const int n = comm.size();
  const int r = comm.rank();
  const int64_t half = args.count / 2;
  const Tree trees[2] = {{n, r, false, 0, half}, {n, n - 1 - r, true, half, args.count}};
  const int64_t segment = all_reduce_steps::segment_elements(comm, args.dtype);
  const int64_t segments = std::max(trees[0].segments(segment), trees[1].segments(segment));
  // Both phases visit (segment, tree) in the same order on every member, so
  // each link's messages arrive in the order they are awaited.
  const auto each_segment = [&](auto&& step) {
    for (int64_t k = 0; k < segments; ++k) {
      for (const Tree& tree : trees) {
        const int64_t begin = tree.first + k * segment;
        if (begin < tree.end) step(tree, begin, std::min(segment, tree.end - begin));
      }
    }
  };
  each_segment([&](const Tree& t, int64_t b, int64_t c) { reduce_segment(comm, args, t, b, c); });
  comm.wait_sends();  // the broadcast overwrites what was sent up
  each_segment(
      [&](const Tree& t, int64_t b, int64_t c) { broadcast_segment(comm, args, t, b, c); });
}

}  // namespace

Algorithm<AllReduceArgs> all_reduce_double_binary_tree() {
  Algorithm<AllReduceArgs> a;
  a.name = "double_binary_tree";
  a.description =
      "two complementary binary trees, each reducing and broadcasting half; pipelined";
  a.cost_formula = "2⌈log2 n⌉α + 2Sβ + Sγ (pipelined over many segments)";
  a.cost = [](const CallShape& shape) {
    const double s = static_cast<double>(shape.bytes);
    return CostTerms{2.0 * detail::ceil_log2(shape.group_size), 2 * s, s};
  };
  a.preconditions = kCommutativeOp;
  a.tunables = {{"segment_bytes", 256 << 10, "bytes per pipelined segment"}};
  a.run = run_double_binary_tree;
  return a;
}

}  // namespace meshsim::builtin
