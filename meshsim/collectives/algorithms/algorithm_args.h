#pragma once
// What an algorithm of each collective receives: flat buffers and counts, the
// same on every member except the pointers. Front-ends (psum, all_gather, ...)
// validate the call, allocate the result and bring data into these layouts;
// algorithms only move and reduce bytes.
//
// Every pointer stays valid, and every input unchanged, until the algorithm
// returns on every member of the group. An output is written only by its
// owner's algorithm, never read by a peer unless the algorithm sends it.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "meshsim/collectives/reduce_op.h"
#include "meshsim/runtime/array/dtype.h"

namespace meshsim {

// The collectives that have algorithms to choose from, in listing order.
// New collectives go at the end, so the values stay what installed code saw.
enum class Collective {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kBarrier,
  kRaggedAllToAll
};
inline constexpr Collective kAllCollectives[] = {
    Collective::kAllReduce,      Collective::kAllGather, Collective::kReduceScatter,
    Collective::kAllToAll,       Collective::kRaggedAllToAll, Collective::kBroadcast,
    Collective::kBarrier};

// "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
// "ragged_all_to_all", "broadcast", "barrier".
std::string_view collective_name(Collective c);
// The collective a name stands for: its own name or a front-end's (psum, pmax,
// pmin and pmean are all_reduce; psum_scatter is reduce_scatter; pswapaxes is
// all_to_all; pbroadcast is broadcast). False for anything else.
bool collective_from_name(std::string_view name, Collective& out);

// out[i] = in_0[i] op in_1[i] op ... op in_{n-1}[i] over the group's members,
// for i in [0, count). `in` and `out` both hold `count` elements of `dtype`
// (front-ends convert bool sums to int32 first). `in` may equal `out`.
struct AllReduceArgs {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t count = 0;
  DType dtype = DType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
};

// out = block_0 | block_1 | ... | block_{n-1}: member r's `in` (`bytes` bytes)
// lands at out + r * bytes on every member.
struct AllGatherArgs {
  const void* in = nullptr;
  void* out = nullptr;
  size_t bytes = 0;
};

// `in` holds n blocks of `count` elements; member r's out[i] = block r of
// every member reduced: in_0[r*count + i] op ... op in_{n-1}[r*count + i].
struct ReduceScatterArgs {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t count = 0;
  DType dtype = DType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
};

// `in` holds n blocks of `bytes` bytes, block j meant for member j; `out`
// receives n blocks, block j from member j (its block for this member).
struct AllToAllArgs {
  const void* in = nullptr;
  void* out = nullptr;
  size_t bytes = 0;
};

// Slices of rows (`row_bytes` bytes each; `slices_per_peer` = spd). Entry
// e = j·spd + t of this member's four index arrays concerns peer j:
// - rows [input_offsets[e], + send_sizes[e]) of `in` go to peer j and land at
//   rows [output_offsets[e], + send_sizes[e]) of peer j's `out` (the
//   sender's output_offsets place the slice on the receiver);
// - recv_sizes[e] is what this member expects from peer j's entry r·spd + t.
// The front-end has checked every slice against `in` and every landing
// against `out` (all members' outs have the same rows), and `out` already
// holds the caller's output: rows no slice lands on keep their values. An
// algorithm writes each received slice where its sender places it, in sender
// rank order where landings overlap (the higher rank wins, as direct), and
// sets received_sizes[e] to what peer j's entry actually sent, whatever
// recv_sizes said (the front-end reports any disagreement after the call).
struct RaggedAllToAllArgs {
  const void* in = nullptr;
  void* out = nullptr;
  size_t row_bytes = 0;
  int64_t slices_per_peer = 1;
  const int64_t* input_offsets = nullptr;
  const int64_t* send_sizes = nullptr;
  const int64_t* output_offsets = nullptr;
  const int64_t* recv_sizes = nullptr;
  int64_t* received_sizes = nullptr;
};

// Every member's `out` (`bytes` bytes) receives the `in` of member `root`.
// `in` is read only on the root.
struct BroadcastArgs {
  const void* in = nullptr;
  void* out = nullptr;
  size_t bytes = 0;
  int root = 0;
};

// No member returns before every member has arrived.
struct BarrierArgs {};

}  // namespace meshsim
