#include "meshsim/collectives/all_to_all.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "meshsim/collectives/algorithms/internal/run_algorithm.h"
#include "meshsim/collectives/internal/axis_checks.h"
#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/internal/box_copy.h"
#include "meshsim/runtime/array/internal/counted_array.h"

namespace meshsim {
namespace {

// x and the output seen as five dims [P, A, M, B, Q]: A and B are the split
// and concat dims in memory order, P, M and Q the products of the dims
// before, between and after them ([P, A, 1, 1, Q] when they are the same
// dim). `split_at` and `concat_at` (1 or 3) say where each of the two sits.
struct Layout {
  std::array<int64_t, 5> in{}, chunk{}, out{};
  int split_at = 1;
  int concat_at = 1;
};

// The layout of the tiled all_to_all of an array whose shape is `shape` with
// a dim of size 1 inserted at `unit` (-1: none). JAX runs a stacked
// all_to_all as exactly that (expand_dims, tiled, squeeze), and a dim of
// size 1 moves no memory, so one copy plan serves both.
Layout layout_of(std::span<const int64_t> shape, int unit, int split, int concat, int n) {
  const int rank = static_cast<int>(shape.size()) + (unit >= 0 ? 1 : 0);
  const auto dim = [&](int d) -> int64_t {
    if (unit < 0 || d < unit) return shape[d];
    return d == unit ? 1 : shape[d - 1];
  };
  const auto product = [&](int begin, int end) {
    int64_t p = 1;
    for (int d = begin; d < end; ++d) p *= dim(d);
    return p;
  };
  const int lo = std::min(split, concat), hi = std::max(split, concat);
  Layout l;
  const std::array<int64_t, 5> in =
      lo == hi ? std::array<int64_t, 5>{product(0, lo), dim(lo), 1, 1, product(lo + 1, rank)}
               : std::array<int64_t, 5>{product(0, lo), dim(lo), product(lo + 1, hi), dim(hi),
                                        product(hi + 1, rank)};
  if (lo != hi) {
    l.split_at = split == hi ? 3 : 1;
    l.concat_at = concat == hi ? 3 : 1;
  }
  // Element by element from registers: copying a freshly written array and
  // patching one element stalled on store forwarding (a tenth of a small call).
  const int64_t part = in[l.split_at] / n;
  for (int d = 0; d < 5; ++d) {
    l.in[d] = in[d];
    l.chunk[d] = d == l.split_at ? part : in[d];
    l.out[d] = l.chunk[d] * (d == l.concat_at ? n : 1);
  }
  return l;
}


// Bytes between consecutive indices of dim k of a row-major `shape`.
int64_t byte_stride(const std::array<int64_t, 5>& shape, int k, size_t esize) {
  int64_t stride = static_cast<int64_t>(esize);
  for (int d = k + 1; d < 5; ++d) stride *= shape[d];
  return stride;
}

// How messages name the call and its axis arguments. pswapaxes has one axis
// argument, used as both split and concat axis.
struct CallNames {
  const char* op;
  const char* split;
  const char* concat;  // null for pswapaxes
};
constexpr CallNames kAllToAll{"all_to_all", "split_axis", "concat_axis"};
constexpr CallNames kPswapaxes{"pswapaxes", "axis", nullptr};

// The direct all-to-all.
// Words: n = group size, S = bytes of x, rank = place in the group, chunk j =
// the j-th of the n blocks of x along split_axis. Rank r's output holds chunk
// r of every member, at block s of concat_axis for sender s.
// Schedule (Meeting::run_direct_making): in a small group each member copies its n
//   chunks into its own output — from shared copies when S is small (1
//   meeting), else in place (2). In a larger group, when n·S <=
//   Meeting::kLeaderBytes, the last member to arrive copies every chunk to its
//   receiver before it releases the group (1 barrier); else each member copies
//   its own, then departs (2 barriers). Each member reads and writes S bytes.
Array all_to_all_impl(DeviceContext& ctx, const CallNames& names, const Array& x,
                      const AxisNames& axes, int split_axis, int concat_axis, bool tiled,
                      const AxisIndexGroups& index_groups, std::string_view algorithm) {
  const char* const op = names.op;
  Meeting meeting(ctx, axes, index_groups, op);
  detail::require_equal_group_sizes(ctx, meeting.group_set(), op);
  const int n = meeting.size();
  const int split =
      detail::canonicalize_axis(split_axis, x.rank(), names.split, op, axes, x.shape());
  const int concat =
      names.concat == nullptr
          ? split
          : detail::canonicalize_axis(concat_axis, x.rank(), names.concat, op, axes, x.shape());
  const int64_t extent = x.shape()[split];
  if (tiled ? extent % n != 0 : extent != n) {
    throw CollectiveShapeError(std::string(op) + " over " + axes.to_string() + ": " +
                               names.split + "=" + std::to_string(split_axis) +
                               " of x of shape " + shape_to_string(x.shape()) + " has size " +
                               std::to_string(extent) +
                               (tiled ? ", which is not divisible by the group size "
                                      : ", which must equal the group size ") +
                               std::to_string(n));
  }

  // Split and concatenated along one dim, the result has x's shape (1/n of
  // it from each member; untiled, that dim is n already): it takes x's
  // shape as checked and counted, instead of a copy rewritten, checked and
  // counted again on every call (Array::empty_like).
  const bool keeps_shape = split == concat;
  Shape out_shape;
  if (!keeps_shape) {
    out_shape = x.shape();
    if (tiled) {
      out_shape[split] /= n;
      out_shape[concat] = detail::gathered_dim(out_shape[concat], n, op, axes, x.shape());
    } else {
      out_shape.erase(out_shape.begin() + split);
      out_shape.insert(out_shape.begin() + concat, n);
    }
    detail::check_result_shape(out_shape, x.dtype(), op, axes, x.shape());
  }
  const auto make_out = [&] {
    // As many elements as x, in either case: not counted again.
    return keeps_shape ? Array::empty_like(x, x.dtype())
                       : detail::empty_counted(out_shape, x.size(), x.dtype());
  };
  const AlgorithmChoice choice = choose_algorithm(
      ctx, op, axes, call_shape(meeting, Collective::kAllToAll, x.nbytes(), x.size()), algorithm);
  CollectiveCall call(op, x.dtype(), x.shape());
  call.param(names.split, split);
  if (names.concat != nullptr) call.param(names.concat, concat).param("tiled", tiled);
  call.algorithm = choice.name;
  // Nothing to move, and the layout's dim products could overflow when a zero
  // dim hides huge ones: only check the calls match.
  if (x.size() == 0) {
    Array out = make_out();
    if (!choice.is_direct()) {
      run_algorithm(meeting, choice, Collective::kAllToAll, call,
                    AllToAllArgs{nullptr, out.mutable_bytes(), 0});
      return out;
    }
    meeting.publish(call, x.bytes(), nullptr);
    meeting.meet();
    meeting.price_all_to_all(0);
    return out;
  }

  // Chunk r of x goes to member r.
  const size_t chunk_bytes = x.nbytes() / static_cast<size_t>(n);
  // Each member copies chunk `rank` of every member's x to its place in
  // `dst`, the output of member `rank`; returns this member's result, made
  // with the meeting (Meeting::run_direct_making: the call is published
  // with no output), and priced.
  const auto receive = [&](int64_t chunk_step, int64_t block_step, auto&& copy_chunk) {
    Array out = meeting.run_direct_making(
        x.nbytes(), static_cast<size_t>(n) * x.nbytes(), make_out, [&](int rank, void* dst) {
          for (int s = 0; s < n; ++s) {
            copy_chunk(static_cast<const std::byte*>(meeting.input(s)) + rank * chunk_step,
                       static_cast<std::byte*>(dst) + s * block_step);
          }
        });
    meeting.price_all_to_all(static_cast<int64_t>(chunk_bytes));
    return out;
  };
  // A chunk that is one run of bytes in x and in the output: one memcpy.
  const auto copy_run = [chunk_bytes](const std::byte* from, std::byte* to) {
    std::memcpy(to, from, chunk_bytes);
  };
  // One dim split and concatenated with only dims of size 1 before it (a 1-d
  // all_to_all, the leading dim): chunk j is the j-th n-th of the bytes of x
  // and of the output alike, one memcpy each, with no layout to work out.
  const bool flat = split == concat && std::all_of(x.shape().begin(), x.shape().begin() + split,
                                                   [](int64_t d) { return d == 1; });
  if (flat && choice.is_direct()) {
    const auto step = static_cast<int64_t>(chunk_bytes);
    meeting.publish(call, x.bytes(), nullptr);
    return receive(step, step, copy_run);
  }

  // Made in place (a copy of the fresh layout stalled on store forwarding).
  const Layout layout = tiled || split == concat ? layout_of(x.shape(), -1, split, concat, n)
                        : split < concat ? layout_of(x.shape(), concat + 1, split, concat + 1, n)
                                         : layout_of(x.shape(), concat, split + 1, concat, n);

  const size_t esize = dtype_size(x.dtype());
  const std::array<int64_t, 5> origin{};
  const int64_t chunk_step =
      layout.chunk[layout.split_at] * byte_stride(layout.in, layout.split_at, esize);
  const int64_t block_step =
      layout.chunk[layout.concat_at] * byte_stride(layout.out, layout.concat_at, esize);
  if (!choice.is_direct()) {
    // Algorithms move whole blocks: pack chunk j of x as block j, run, and
    // unpack block s (from member s) to its place along concat_axis.
    const BoxCopy pack(esize, layout.chunk, layout.in, origin, layout.chunk, origin);
    const BoxCopy unpack(esize, layout.chunk, layout.chunk, origin, layout.out, origin);
    const auto block_bytes = static_cast<int64_t>(chunk_bytes);  // a block is a chunk
    Array out = make_out();
    std::byte* const out_bytes = out.mutable_bytes();
    Array packed = Array::empty({x.size()}, x.dtype());
    Array received = Array::empty({x.size()}, x.dtype());
    for (int j = 0; j < n; ++j) {
      pack.copy_all(x.bytes() + j * chunk_step, packed.mutable_bytes() + j * block_bytes);
    }
    run_algorithm(meeting, choice, Collective::kAllToAll, call,
                  AllToAllArgs{packed.bytes(), received.mutable_bytes(),
                               static_cast<size_t>(block_bytes)});
    for (int s = 0; s < n; ++s) {
      unpack.copy_all(received.bytes() + s * block_bytes, out_bytes + s * block_step);
    }
    return out;
  }
  meeting.publish(call, x.bytes(), nullptr);
  // A BoxCopy only for a chunk of several runs: its set-up costs a quarter of
  // a small call.
  if (BoxCopy::one_run(layout.chunk, layout.in, layout.out)) {
    return receive(chunk_step, block_step, copy_run);
  }
  const BoxCopy copy(esize, layout.chunk, layout.in, origin, layout.out, origin);
  return receive(chunk_step, block_step,
                 [&copy](const std::byte* from, std::byte* to) { copy.copy_all(from, to); });
}

}  // namespace

Array all_to_all(DeviceContext& ctx, const Array& x, const AxisNames& axes, int split_axis,
                 int concat_axis, const AllToAllOptions& options) {
  return all_to_all_impl(ctx, kAllToAll, x, axes, split_axis, concat_axis, options.tiled,
                         options.axis_index_groups, options.algorithm);
}

Array pswapaxes(DeviceContext& ctx, const Array& x, const AxisNames& axes, int axis,
                const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  return all_to_all_impl(ctx, kPswapaxes, x, axes, axis, axis, /*tiled=*/false,
                         axis_index_groups, algorithm);
}

}  // namespace meshsim
