#pragma once
// The steps the built-in all-reduce algorithms are made of: near-equal
// blocks, an exchange whose two directions may differ by a few elements, a
// ring pass (reduce-scatter then all-gather) runnable step by step, and the
// non-power-of-two fold of recursive doubling and Rabenseifner. They use only
// the Communicator API, like a user's algorithm would.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "meshsim/collectives/algorithms/algorithm_args.h"
#include "meshsim/collectives/algorithms/communicator.h"

namespace meshsim::all_reduce_steps {

// `count` elements cut into `n` contiguous blocks; the first count % n blocks
// hold one element more than the others (base()).
struct Blocks {
  int64_t count = 0;
  int n = 1;
  int64_t base() const { return count / n; }
  int64_t begin(int b) const { return b * base() + std::min<int64_t>(b, count % n); }
  int64_t size(int b) const { return base() + (b < count % n ? 1 : 0); }
};

// Writes args.in into args.out (nothing when they are the same buffer or empty).
void copy_input(const AllReduceArgs& args);
// n == 1 or count == 0: the result is the input. Returns true when it handled the call.
bool trivial(Communicator& comm, const AllReduceArgs& args);

// Sends `send_count` elements at `send` to `to` while receiving `recv_count`
// elements from `from` into `recv` — reduced into it with `reduce`, or copied
// when it is empty. Both counts are at least `common`, and the receiver of
// each transfer passes the same `common` as its sender: the first `common`
// elements move with one sendrecv(_reduce), safe on cycles; the rest (a tail
// of at most a few elements: one segment, so posting it never waits) with a
// plain send and receive. `send` must not change until the peer has read its
// tail (wait_sends). A member with nothing to move skips the transfer, and so
// does its peer, since both know the sizes.
void exchange(Communicator& comm, int to, const std::byte* send, int64_t send_count, int from,
              std::byte* recv, int64_t recv_count, int64_t common, DType dtype,
              std::optional<ReduceOp> reduce);

// One ring all-reduce of `count` elements over `comm`'s members, in
// `direction` +1 (send to rank + 1) or -1, run step by step so that two rings
// can interleave. The reduce-scatter's step s sends block (v - s) to the next
// member and reduces block (v - s - 1) from the previous one into `out` (v =
// the member's place on the ring); after n - 1 steps the member holds block
// owned_block() = v + 1 fully reduced. The all-gather's step s passes block
// (v + 1 - s) on and receives block (v - s). Call comm.wait_sends() between
// the two phases (the all-gather overwrites blocks whose tails were sent).
// `in` is read in place and never written; it may equal `out`.
class RingAllReduce {
 public:
  RingAllReduce(Communicator& comm, int direction, const std::byte* in, std::byte* out,
                int64_t count, DType dtype, ReduceOp op);
  int steps() const { return blocks_.n - 1; }
  void reduce_scatter_step(int s);
  void all_gather_step(int s);
  // Both phases, with the wait between them.
  void run();
  // The elements [begin, begin + size) this member holds reduced after the
  // reduce-scatter.
  int64_t owned_begin() const { return blocks_.begin(owned_block()); }
  int64_t owned_size() const { return blocks_.size(owned_block()); }

 private:
  int block(int b) const { return ((b % blocks_.n) + blocks_.n) % blocks_.n; }
  int owned_block() const { return block(place_ + 1); }
  int rank_at(int place) const;

  Communicator& comm_;
  int direction_;
  const std::byte* in_;
  std::byte* out_;
  DType dtype_;
  ReduceOp op_;
  size_t esize_;
  Blocks blocks_;
  int place_;
};

// The non-power-of-two step of recursive doubling and Rabenseifner (as
// MPICH): with p the largest power of two <= n and rem = n - p, the members
// below 2·rem pair up; the even one sends its input to the odd one above,
// which reduces it into its `out`, and sits out until unfold() hands it the
// result. The others take virtual ranks 0..p-1 (the odd members of the pairs
// first), so that rank order is kept.
class PowerOfTwoFold {
 public:
  PowerOfTwoFold(int n, int rank);
  int p() const { return p_; }
  // -1 for a member that sits out.
  int vrank() const { return vrank_; }
  int rank_of(int vrank) const { return vrank < rem_ ? 2 * vrank + 1 : vrank + rem_; }
  // After fold() every member with a virtual rank holds its partial in args.out.
  void fold(Communicator& comm, const AllReduceArgs& args) const;
  // The members with virtual ranks hold the result in args.out; the others get it.
  void unfold(Communicator& comm, const AllReduceArgs& args) const;

 private:
  int rank_ = 0, p_ = 1, rem_ = 0, vrank_ = 0;
};

// The elements in one pipelined segment: "segment_bytes" cut to whole cache
// lines (at least one), as the fabric cuts its segments.
int64_t segment_elements(Communicator& comm, DType dtype);

}  // namespace meshsim::all_reduce_steps
