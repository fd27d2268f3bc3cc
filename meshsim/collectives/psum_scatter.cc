#include "meshsim/collectives/psum_scatter.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "meshsim/collectives/algorithms/internal/run_algorithm.h"
#include "meshsim/collectives/internal/axis_checks.h"
#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/collectives/internal/reduction.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/internal/box_copy.h"
#include "meshsim/runtime/array/internal/counted_array.h"

namespace meshsim {
namespace {

// A point-to-point algorithm reduces whole blocks: block r (for rank r) is
// made contiguous first when dims before `dim` interleave the blocks, and a
// sum of bool is counted in int32.
void run_reduce_scatter_algorithm(Meeting& meeting, const AlgorithmChoice& choice,
                                  const CollectiveCall& call, const Array& x, int dim, Array& out) {
  const int n = meeting.size();
  const DType dtype = out.dtype();
  const Array in = x.dtype() == dtype ? x : x.astype(dtype);
  int64_t rows = 1;
  if (x.size() > 0) {
    for (int d = 0; d < dim; ++d) rows *= x.shape()[d];
  }
  const int64_t count = x.size() / n;  // per block
  Array blocks = in;
  if (rows != 1 && count > 0) {
    const int64_t run = count / rows;
    const size_t esize = dtype_size(dtype);
    const std::array<int64_t, 2> chunk = {rows, run}, whole = {rows, n * run}, origin = {0, 0};
    const BoxCopy copy(esize, chunk, whole, origin, chunk, origin);
    blocks = Array::empty({static_cast<int64_t>(n), count}, dtype);
    for (int r = 0; r < n; ++r) {
      copy.copy_all(in.bytes() + r * run * static_cast<int64_t>(esize),
                    blocks.mutable_bytes() + r * count * static_cast<int64_t>(esize));
    }
  }
  run_algorithm(meeting, choice, Collective::kReduceScatter, call,
                ReduceScatterArgs{blocks.bytes(), out.mutable_bytes(), count, dtype, ReduceOp::kSum});
}

}  // namespace

// The direct reduce-scatter.
// Words: n = group size, S = bytes of x, rank = place in the group. Seen as
// `rows` rows of n parts of `run` elements each (rows = product of the dims
// before scatter_dimension), rank r's output row o is the rank-order sum of
// part r of row o over all n inputs.
// Schedule (Meeting::run_direct_making): in a small group each member reduces its
//   own parts — from shared copies when S is small (1 meeting), else in place
//   (2). In a larger group, when n·S <= Meeting::kLeaderBytes, the last member
//   to arrive reduces every part into its owner's output before it releases
//   the group (1 barrier); else each member reduces its own, then departs (2
//   barriers). Each member reads S and writes S/n bytes.
Array psum_scatter(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                   const PsumScatterOptions& options) {
  static constexpr const char* kOp = "psum_scatter";
  Meeting meeting(ctx, axes, options.axis_index_groups, kOp);
  detail::require_equal_group_sizes(ctx, meeting.group_set(), kOp);
  const int n = meeting.size();
  const int dim = detail::canonicalize_axis(options.scatter_dimension, x.rank(),
                                            "scatter_dimension", kOp, axes, x.shape());
  const int64_t extent = x.shape()[dim];
  if (options.tiled ? extent % n != 0 : extent != n) {
    throw CollectiveShapeError(std::string(kOp) + " over " + axes.to_string() + ": scatter_dimension=" +
                     std::to_string(options.scatter_dimension) + " of x of shape " +
                     shape_to_string(x.shape()) + " has size " + std::to_string(extent) +
                     (options.tiled ? ", which is not divisible by the group size "
                                    : ", which must equal the group size ") +
                     std::to_string(n));
  }

  Shape out_shape = x.shape();
  if (options.tiled) {
    out_shape[dim] = extent / n;
  } else {
    out_shape.erase(out_shape.begin() + dim);
  }
  const DType out_dtype = reduce_output_dtype(ReduceOp::kSum, x.dtype());
  // A 1/n of x's elements: not counted again.
  const auto make_out = [&] { return detail::empty_counted(out_shape, x.size() / n, out_dtype); };
  const AlgorithmChoice choice = choose_algorithm(
      ctx, kOp, axes,
      call_shape(meeting, Collective::kReduceScatter, x.nbytes(), x.size(), ReduceOp::kSum),
      options.algorithm);
  CollectiveCall call(kOp, x.dtype(), x.shape());
  call.param("scatter_dimension", dim).param("tiled", options.tiled);
  call.algorithm = choice.name;
  if (!choice.is_direct()) {
    Array out = make_out();
    run_reduce_scatter_algorithm(meeting, choice, call, x, dim, out);
    return out;
  }
  // The result comes with the meeting (Meeting::run_direct_making).
  meeting.publish(call, x.bytes(), nullptr);
  // Nothing to reduce, and the row product below could overflow when a zero
  // dim hides huge ones: only check the calls match.
  if (x.size() == 0) {
    meeting.meet();
    meeting.price_all_to_all(0);
    return make_out();
  }

  int64_t rows = 1;
  for (int d = 0; d < dim; ++d) rows *= x.shape()[d];
  const int64_t row = x.size() / rows;
  const int64_t run = row / n;
  const int64_t in_esize = static_cast<int64_t>(dtype_size(x.dtype()));
  const int64_t out_esize = static_cast<int64_t>(dtype_size(out_dtype));
  const auto reduce_part = [&](int rank, void* dst) {
    for (int64_t o = 0; o < rows; ++o) {
      const int64_t offset = (o * row + rank * run) * in_esize;
      reduce_into(ReduceOp::kSum, x.dtype(), n,
                  [&](int r) {
                    return static_cast<const void*>(
                        static_cast<const std::byte*>(meeting.input(r)) + offset);
                  },
                  static_cast<std::byte*>(dst) + o * run * out_esize, run);
    }
  };

  Array out = meeting.run_direct_making(x.nbytes(), static_cast<size_t>(n) * x.nbytes(), make_out,
                                        reduce_part);
  meeting.price_all_to_all(static_cast<int64_t>(x.nbytes()) / n);  // block r to member r
  return out;
}

}  // namespace meshsim
