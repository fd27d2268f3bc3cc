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

// The collectives that have algorithms to choose from.
enum class Collective { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kBroadcast, kBarrier };
inline constexpr Collective kAllCollectives[] = {
    Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
    Collective::kAllToAll,  Collective::kBroadcast, Collective::kBarrier};

// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "barrier".
std::string_view collective_name(Collective c);
// The collective a name stands for: its own name or a front-end's (psum, pmax,
// pmin and pmean are all_reduce; psum_scatter is reduce_scatter; pbroadcast is
// broadcast). False for anything else.
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
