#include "meshsim/collectives/all_gather.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "meshsim/collectives/algorithms/internal/run_algorithm.h"
#include "meshsim/collectives/internal/axis_checks.h"
#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/runtime/array/internal/box_copy.h"
#include "meshsim/runtime/array/internal/counted_array.h"

namespace meshsim {

// The direct all-gather.
// Words: n = group size, S = bytes of x, rank = place in the group. Seen as
// `rows` rows of `run` contiguous elements (rows = product of the dims before
// `axis`), output row o is row o of every input, side by side in rank order.
// That holds for stacking and tiling alike: a new dim of size 1 at `axis`
// does not move memory.
// Schedule (Meeting::run_direct_making): in a small group each member copies all n
//   inputs into its own output — from shared copies when S is small (1
//   meeting), else in place (2). In a larger group, when n·n·S <=
//   Meeting::kLeaderBytes, the last member to arrive fills every output before
//   it releases the group (1 barrier); else each member fills its own, then
//   departs (2 barriers). Each member reads and writes n·S bytes.
Array all_gather(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                 const AllGatherOptions& options) {
  static constexpr const char* kOp = "all_gather";
  Meeting meeting(ctx, axes, options.axis_index_groups, kOp);
  detail::require_equal_group_sizes(ctx, meeting.group_set(), kOp);
  const int n = meeting.size();
  const int axis = detail::canonicalize_axis(options.axis, x.rank() + (options.tiled ? 0 : 1),
                                             "axis", kOp, axes, x.shape());

  Shape out_shape = x.shape();
  if (options.tiled) {
    out_shape[axis] = detail::gathered_dim(out_shape[axis], n, kOp, axes, x.shape());
  } else {
    out_shape.insert(out_shape.begin() + axis, n);
  }
  detail::check_result_shape(out_shape, x.dtype(), kOp, axes, x.shape());
  // n times x's elements (which check_result_shape just bounded): not counted again.
  const auto make_out = [&] { return detail::empty_counted(out_shape, x.size() * n, x.dtype()); };
  const AlgorithmChoice choice = choose_algorithm(
      ctx, kOp, axes, call_shape(meeting, Collective::kAllGather, x.nbytes(), x.size()),
      options.algorithm);
  CollectiveCall call(kOp, x.dtype(), x.shape());
  call.param("axis", axis).param("tiled", options.tiled);
  call.algorithm = choice.name;
  // The row products below could overflow when a zero dim hides huge ones.
  int64_t rows = 1;
  int64_t run = 1;
  if (x.size() > 0) {
    for (int d = 0; d < axis; ++d) rows *= x.shape()[d];
    for (int d = axis; d < x.rank(); ++d) run *= x.shape()[d];
  }
  const size_t esize = dtype_size(x.dtype());
  const int64_t run_bytes = run * static_cast<int64_t>(esize);
  // Puts the rows of one input at their place in the output; one row is
  // one memcpy, and only more rows pay for a BoxCopy's set-up.
  const auto place_rows = [&](auto&& place) {
    if (rows == 1) {
      return place([&](const std::byte* from, std::byte* to) { std::memcpy(to, from, run_bytes); });
    }
    const std::array<int64_t, 2> chunk = {rows, run}, whole = {rows, n * run}, origin = {0, 0};
    const BoxCopy copy(esize, chunk, chunk, origin, whole, origin);
    return place([&copy](const std::byte* from, std::byte* to) { copy.copy_all(from, to); });
  };
  if (!choice.is_direct()) {
    Array out = make_out();
    std::byte* const out_bytes = out.mutable_bytes();
    // Algorithms gather whole blocks; with dims before `axis` the blocks are
    // then interleaved row by row into the result.
    Array blocks = rows == 1 ? Array() : Array::empty({n, x.size()}, x.dtype());
    std::byte* const gathered = rows == 1 ? out_bytes : blocks.mutable_bytes();
    run_algorithm(meeting, choice, Collective::kAllGather, call,
                  AllGatherArgs{x.bytes(), gathered, x.nbytes()});
    if (rows != 1) {
      place_rows([&](auto&& copy) {
        for (int r = 0; r < n; ++r) copy(gathered + r * x.nbytes(), out_bytes + r * run_bytes);
      });
    }
    return out;
  }
  // The result comes with the meeting (Meeting::run_direct_making).
  meeting.publish(call, x.bytes(), nullptr);
  // Nothing to move: only check the calls match.
  if (x.size() == 0) {
    meeting.meet();
    meeting.price_all_to_all(0);
    return make_out();
  }
  return place_rows([&](auto&& copy) {
    Array out = meeting.run_direct_making(
        x.nbytes(), static_cast<size_t>(n) * n * x.nbytes(), make_out, [&](int, void* output) {
          for (int r = 0; r < n; ++r) {
            copy(static_cast<const std::byte*>(meeting.input(r)),
                 static_cast<std::byte*>(output) + r * run_bytes);
          }
        });
    meeting.price_all_to_all(static_cast<int64_t>(x.nbytes()));
    return out;
  });
}

}  // namespace meshsim
