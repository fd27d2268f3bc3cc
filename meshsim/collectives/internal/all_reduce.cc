#include "meshsim/collectives/internal/all_reduce.h"

#include <cstring>

#include "meshsim/collectives/algorithms/internal/run_algorithm.h"
#include "meshsim/collectives/internal/meeting.h"

namespace meshsim::detail {
namespace {

int64_t lines_of(int64_t count, size_t element_size) {
  const int64_t per_line = std::max<int64_t>(1, 64 / static_cast<int64_t>(element_size));
  return (count + per_line - 1) / per_line;
}

// How many ranks reduce a slice: no more than the array has cache lines, so
// a small array on a large group costs O(n) in all, not O(n^2) (65,536
// members each visiting every peer for an empty slice).
int slicers(int n, int64_t count, size_t element_size) {
  return static_cast<int>(std::min<int64_t>(n, lines_of(count, element_size)));
}

// Elements [begin, end) of the slice that `rank` of `m` slicers reduces:
// near-equal, with slice borders on 64-byte boundaries where possible.
std::pair<int64_t, int64_t> slice_of(int rank, int m, int64_t count, size_t element_size) {
  const int64_t per_line = std::max<int64_t>(1, 64 / static_cast<int64_t>(element_size));
  const int64_t lines = lines_of(count, element_size);
  const int64_t begin = std::min(count, lines * rank / m * per_line);
  const int64_t end = std::min(count, lines * (rank + 1) / m * per_line);
  return {begin, end};
}

// The bytes a member reduces before it copies them to its peers: they stay
// in its L1 and L2 caches between the two (a multiple of 64, and of every
// dtype's size).
constexpr size_t kChunkBytes = 16 * 1024;

}  // namespace

Array all_reduce(DeviceContext& ctx, const char* op_name, ReduceOp op, const Array& x,
                 const AxisNames& axes, const AxisIndexGroups& index_groups, DType call_dtype,
                 std::string_view algorithm) {
  Meeting meeting(ctx, axes, index_groups, op_name);
  const DType out_dtype = reduce_output_dtype(op, x.dtype());
  const int64_t count = x.size();
  const int n = meeting.size();
  const int rank = meeting.rank();
  const AlgorithmChoice choice = choose_algorithm(
      ctx, op_name, axes, call_shape(meeting, Collective::kAllReduce, x.nbytes(), count, op),
      algorithm);
  CollectiveCall call(op_name, call_dtype, x.shape());
  call.algorithm = choice.name;
  if (!choice.is_direct()) {
    // Algorithms reduce within one dtype: a sum of bool counts in int32.
    Array out = Array::empty_like(x, out_dtype);
    const Array in = x.dtype() == out_dtype ? x : x.astype(out_dtype);
    const AllReduceArgs args{in.bytes(), out.mutable_bytes(), count, out_dtype, op};
    run_algorithm(meeting, choice, Collective::kAllReduce, call, args);
    return out;
  }
  // Every reduction runs in rank order, so all results have the same bits.
  const auto reduce_all = [&](void* into) {
    reduce_into(op, x.dtype(), n, [&](int r) { return meeting.input(r); }, into, count);
  };
  const bool small = x.nbytes() * n <= Meeting::kLeaderBytes;
  if (small && meeting.rendezvous().leaderless()) {
    // A small group: each member reduces for itself into its own result,
    // which no peer reads (so it is made with the meeting), from the shared
    // copies when they fit (1 meeting), else in place (then a departure).
    // The work runs once, for this member, after the meeting: it prices
    // there too, so the result is returned as made (no move of it).
    meeting.publish(call, x.bytes(), nullptr);
    return meeting.run_direct_making(
        x.nbytes(), x.nbytes() * n, [&] { return Array::empty_like(x, out_dtype); },
        [&](int, void* output) {
          meeting.price_all_to_all(x.nbytes());
          meeting.prefetch_peer_inputs(0, x.nbytes());
          reduce_all(output);
        });
  }
  Array out = Array::empty_like(x, out_dtype);
  std::byte* const out_bytes = out.mutable_bytes();
  meeting.publish(call, x.bytes(), out_bytes);
  if (small) {
    // A larger group: the leader reduces once into the group's result
    // buffer; each member copies it out after the meeting, all at once.
    Rendezvous& group = meeting.rendezvous();
    meeting.meet([&] { reduce_all(group.leader_result(out.nbytes())); });
    // An empty result has no storage: memcpy must not see its null pointer.
    if (out.nbytes() > 0) std::memcpy(out_bytes, group.leader_result(), out.nbytes());
    meeting.price_all_to_all(x.nbytes());
    return out;
  }
  // Large: each member reduces its slice and writes it into every member's
  // output, then departs (below).
  meeting.meet();
  meeting.price_all_to_all(x.nbytes());

  const size_t esize = dtype_size(out_dtype);
  const size_t in_esize = dtype_size(x.dtype());
  const int m = slicers(n, count, esize);
  if (rank < m) {
    const auto [begin, end] = slice_of(rank, m, count, esize);
    // Chunk by chunk, so that the copies to the peers read the chunk this
    // member just reduced from its cache, not from memory: each input is
    // read once and each output written once (2·n·S bytes in all, where a
    // reduce-scatter then all-gather reads the outputs back: 3·n·S).
    const int64_t chunk = static_cast<int64_t>(kChunkBytes / esize);
    for (int64_t at = begin; at < end; at += chunk) {
      const int64_t len = std::min(chunk, end - at);
      std::byte* const reduced = out_bytes + at * esize;
      reduce_into(op, x.dtype(), n,
                  [&](int r) {
                    return static_cast<const void*>(
                        static_cast<const std::byte*>(meeting.input(r)) + at * in_esize);
                  },
                  reduced, len);
      // From the next rank on, so members do not all write one output at once.
      for (int i = 1; i < n; ++i) {
        const int r = (rank + i) % n;
        std::memcpy(static_cast<std::byte*>(meeting.peer(r).output) + at * esize, reduced,
                    static_cast<size_t>(len) * esize);
      }
    }
  }
  meeting.arrive();  // departure: every slice is in every output; no input is read any more
  return out;
}

}  // namespace meshsim::detail
