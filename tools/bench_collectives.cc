#include "tools/bench_collectives.h"

#include "meshsim/collectives/all_gather.h"
#include "meshsim/collectives/all_to_all.h"
#include "meshsim/collectives/pbroadcast.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/collectives/psum_scatter.h"
#include "meshsim/collectives/ragged_all_to_all.h"
#include "meshsim/collectives/reductions.h"
#include "tools/bench_reference.h"

namespace meshsim::cli {
namespace {

int group_size(const DeviceGroups& groups) { return static_cast<int>(groups.members[0].size()); }
int num_positions(const DeviceGroups& groups) { return static_cast<int>(groups.group_of.size()); }

std::vector<Array> make_inputs(DType dtype, int64_t count, int positions, int modulus) {
  std::vector<Array> inputs;
  for (int p = 0; p < positions; ++p) inputs.push_back(bench_input(dtype, count, p, modulus));
  return inputs;
}

// A workload whose devices pass one input each, with the byte counts of
// `count` elements in and `out_count` elements of `out_dtype` out.
Workload single_input(const BenchParams& params, const std::vector<Array>& inputs, int64_t count,
                      DType out_dtype, int64_t out_count) {
  Workload work;
  work.type = inputs[0].dtype();
  work.op = params.op;
  work.root = params.root;
  work.count = count;
  work.send_bytes = inputs[0].nbytes();
  work.recv_bytes = static_cast<size_t>(out_count) * dtype_size(out_dtype);
  for (const Array& input : inputs) work.args.push_back({input});
  return work;
}

int64_t whole(int64_t elements, int) { return elements; }
int64_t one_block(int64_t elements, int n) { return elements / n; }
int64_t n_blocks(int64_t elements, int n) { return elements / n * n; }
int64_t one_element(int64_t, int) { return 1; }

double all_reduce_factor(int n) { return 2.0 * (n - 1) / n; }
double spread_factor(int n) { return static_cast<double>(n - 1) / n; }
double unit_factor(int) { return 1.0; }
double floor_two_pass(int devices, double size) { return 2.0 * devices * size; }
double floor_one_pass(int devices, double size) { return devices * size; }
double floor_zero_copy(int, double) { return 0; }

// The options of a tiled call. The algorithm is copied only when one was
// asked for: assigning even an empty one cost 2 % of an 8-byte call.
template <class Options>
Options tiled(std::string_view algorithm) {
  Options options;
  options.tiled = true;
  if (!algorithm.empty()) options.algorithm = algorithm;
  return options;
}

// --- all_reduce (psum / pmax / pmin): count = c; size = c elements.
Workload prepare_all_reduce(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                            bool with_expected) {
  const int64_t count = static_cast<int64_t>(bytes / dtype_size(params.dtype));
  if (count == 0) return {};
  const std::vector<Array> inputs =
      make_inputs(params.dtype, count, num_positions(groups), kReduceModulus);
  Workload work =
      single_input(params, inputs, count, reduce_output_dtype(params.op, params.dtype), count);
  if (with_expected) work.expected = expected_all_reduce(params.op, inputs, groups);
  return work;
}

// No axis_index_groups, made once: a `{}` argument built and freed a vector
// on every call.
const AxisIndexGroups kWholeGroups;

Array run_all_reduce(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
                     std::string_view algorithm) {
  const Array& x = work.args[position][0];
  switch (work.op) {
    case ReduceOp::kMax:
      return pmax(ctx, x, axes, kWholeGroups, algorithm);
    case ReduceOp::kMin:
      return pmin(ctx, x, axes, kWholeGroups, algorithm);
    case ReduceOp::kSum:
      break;
  }
  return psum(ctx, x, axes, kWholeGroups, algorithm);
}

// --- all_gather, tiled along dim 0: count = c / n per device in, n times
// that out; size = the output.
Workload prepare_all_gather(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                            bool with_expected) {
  const int n = group_size(groups);
  const int64_t per = static_cast<int64_t>(bytes / dtype_size(params.dtype)) / n;
  if (per == 0) return {};
  const std::vector<Array> inputs =
      make_inputs(params.dtype, per, num_positions(groups), kMoveModulus);
  Workload work = single_input(params, inputs, per, params.dtype, per * n);
  if (with_expected) work.expected = expected_all_gather(inputs, groups);
  return work;
}

Array run_all_gather(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
                     std::string_view algorithm) {
  return all_gather(ctx, work.args[position][0], axes, tiled<AllGatherOptions>(algorithm));
}

// --- reduce_scatter (psum_scatter), tiled along dim 0: count = c / n out per
// device, n times that in; size = the input.
Workload prepare_reduce_scatter(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                                bool with_expected) {
  const int n = group_size(groups);
  const int64_t per = static_cast<int64_t>(bytes / dtype_size(params.dtype)) / n;
  if (per == 0) return {};
  const std::vector<Array> inputs =
      make_inputs(params.dtype, per * n, num_positions(groups), kReduceModulus);
  Workload work =
      single_input(params, inputs, per, reduce_output_dtype(ReduceOp::kSum, params.dtype), per);
  if (with_expected) work.expected = expected_psum_scatter(inputs, groups);
  return work;
}

Array run_reduce_scatter(DeviceContext& ctx, const Workload& work, int position,
                         const AxisNames& axes, std::string_view algorithm) {
  return psum_scatter(ctx, work.args[position][0], axes, tiled<PsumScatterOptions>(algorithm));
}

// --- all_to_all, tiled, split and concat along dim 0: count = c / n per
// peer; size = n * count elements, in and out.
Workload prepare_all_to_all(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                            bool with_expected) {
  const int n = group_size(groups);
  const int64_t per = static_cast<int64_t>(bytes / dtype_size(params.dtype)) / n;
  if (per == 0) return {};
  const std::vector<Array> inputs =
      make_inputs(params.dtype, per * n, num_positions(groups), kMoveModulus);
  Workload work = single_input(params, inputs, per, params.dtype, per * n);
  if (with_expected) work.expected = expected_all_to_all(inputs, groups);
  return work;
}

Array run_all_to_all(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
                     std::string_view algorithm) {
  return all_to_all(ctx, work.args[position][0], axes, 0, 0, tiled<AllToAllOptions>(algorithm));
}

// --- ppermute along the ring i -> i + 1 (nccl-tests' sendrecv): count = c.
Workload prepare_ppermute(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                          bool with_expected) {
  const int64_t count = static_cast<int64_t>(bytes / dtype_size(params.dtype));
  if (count == 0) return {};
  const std::vector<Array> inputs =
      make_inputs(params.dtype, count, num_positions(groups), kMoveModulus);
  Workload work = single_input(params, inputs, count, params.dtype, count);
  const int n = group_size(groups);
  for (int i = 0; i < n; ++i) work.perm.emplace_back(i, (i + 1) % n);
  if (with_expected) work.expected = expected_ring_shift(inputs, groups);
  return work;
}

Array run_ppermute(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
                   std::string_view) {
  return ppermute(ctx, work.args[position][0], axes, work.perm);
}

// --- pbroadcast from rank --root: count = c.
Workload prepare_pbroadcast(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                            bool with_expected) {
  const int64_t count = static_cast<int64_t>(bytes / dtype_size(params.dtype));
  if (count == 0) return {};
  const std::vector<Array> inputs =
      make_inputs(params.dtype, count, num_positions(groups), kMoveModulus);
  Workload work = single_input(params, inputs, count, params.dtype, count);
  if (with_expected) {
    work.expected = expected_broadcast(inputs, groups, params.root);
  }
  return work;
}

Array run_pbroadcast(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
                     std::string_view algorithm) {
  return pbroadcast(ctx, work.args[position][0], axes, work.root, algorithm);
}

// --- ragged_all_to_all: every device sends and receives n * (c / n) rows,
// split between peers by seeded random sizes (ragged_send_sizes); count =
// c / n, the mean rows per peer, as all_to_all. Arguments per device:
// operand, output (zeros), input_offsets, send_sizes, output_offsets,
// recv_sizes (int64, one entry per peer).
Workload prepare_ragged(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                        bool with_expected) {
  const int n = group_size(groups);
  const int64_t per = static_cast<int64_t>(bytes / dtype_size(params.dtype)) / n;
  if (per == 0) return {};
  const int64_t rows = per * n;
  const std::vector<Array> operands =
      make_inputs(params.dtype, rows, num_positions(groups), kMoveModulus);
  Workload work = single_input(params, operands, per, params.dtype, rows);
  const auto sizes = ragged_send_sizes(n, rows, params.seed);
  const Array output = Array::zeros({rows}, params.dtype);
  for (int p = 0; p < num_positions(groups); ++p) {
    const int s = groups.rank_of[p];
    std::vector<int64_t> input_offsets(n), send_sizes(n), output_offsets(n), recv_sizes(n);
    int64_t sent = 0;
    for (int r = 0; r < n; ++r) {
      input_offsets[r] = sent;
      send_sizes[r] = sizes[s][r];
      sent += sizes[s][r];
      for (int below = 0; below < s; ++below) output_offsets[r] += sizes[below][r];
      recv_sizes[r] = sizes[r][s];
    }
    const auto index_array = [&](const std::vector<int64_t>& v) {
      return Array::from_values<int64_t>({n}, std::span<const int64_t>(v));
    };
    work.args[p].insert(work.args[p].end(),
                        {output, index_array(input_offsets), index_array(send_sizes),
                         index_array(output_offsets), index_array(recv_sizes)});
  }
  if (with_expected) work.expected = expected_ragged_all_to_all(operands, groups, sizes);
  return work;
}

Array run_ragged(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
                 std::string_view) {
  const std::vector<Array>& a = work.args[position];
  return ragged_all_to_all(ctx, a[0], a[1], a[2], a[3], a[4], a[5], axes);
}

// --- barrier: psum of one int32 per device, whatever the sweep and --dtype.
Workload prepare_barrier(const BenchParams&, const DeviceGroups& groups, size_t,
                         bool with_expected) {
  const BenchParams sum_of_int32{.dtype = DType::kInt32, .op = ReduceOp::kSum};
  const std::vector<Array> inputs =
      make_inputs(DType::kInt32, 1, num_positions(groups), kReduceModulus);
  Workload work = single_input(sum_of_int32, inputs, 1, DType::kInt32, 1);
  if (with_expected) {
    work.expected = expected_all_reduce(ReduceOp::kSum, inputs, groups);
  }
  return work;
}

Array run_barrier(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
                  std::string_view) {
  return psum(ctx, work.args[position][0], axes);
}

// Every field is given, so the table reads as a list of properties.
// clang-format off
const Collective kCollectives[] = {
    {.name = "all_reduce", .alias = "psum",
     .summary = "psum / pmax / pmin (--op) of c elements",
     .reduces = Reduces::kAll, .rooted = false, .sweeps = true,
     .kind = meshsim::Collective::kAllReduce, .input_count = whole,
     .bus_factor = all_reduce_factor, .bus_formula = "2(n-1)/n",
     .floor_bytes = floor_two_pass, .floor_formula = "2*N*S",
     .prepare = prepare_all_reduce, .run = run_all_reduce},
    {.name = "all_gather", .alias = "",
     .summary = "tiled all_gather of c/n elements per device",
     .reduces = Reduces::kNo, .rooted = false, .sweeps = true,
     .kind = meshsim::Collective::kAllGather, .input_count = one_block,
     .bus_factor = spread_factor, .bus_formula = "(n-1)/n",
     .floor_bytes = floor_one_pass, .floor_formula = "N*S",
     .prepare = prepare_all_gather, .run = run_all_gather},
    {.name = "reduce_scatter", .alias = "psum_scatter",
     .summary = "tiled psum_scatter of n*(c/n) elements (sum only)",
     .reduces = Reduces::kSumOnly, .rooted = false, .sweeps = true,
     .kind = meshsim::Collective::kReduceScatter, .input_count = n_blocks,
     .bus_factor = spread_factor, .bus_formula = "(n-1)/n",
     .floor_bytes = floor_one_pass, .floor_formula = "N*S",
     .prepare = prepare_reduce_scatter, .run = run_reduce_scatter},
    {.name = "all_to_all", .alias = "",
     .summary = "tiled all_to_all of n*(c/n) elements",
     .reduces = Reduces::kNo, .rooted = false, .sweeps = true,
     .kind = meshsim::Collective::kAllToAll, .input_count = n_blocks,
     .bus_factor = spread_factor, .bus_formula = "(n-1)/n",
     .floor_bytes = floor_one_pass, .floor_formula = "N*S",
     .prepare = prepare_all_to_all, .run = run_all_to_all},
    {.name = "ppermute", .alias = "",
     .summary = "ring shift i -> i+1 of c elements",
     .reduces = Reduces::kNo, .rooted = false, .sweeps = true,
     .kind = std::nullopt, .input_count = whole,
     .bus_factor = unit_factor, .bus_formula = "1",
     .floor_bytes = floor_zero_copy, .floor_formula = "0 (zero-copy)",
     .prepare = prepare_ppermute, .run = run_ppermute},
    {.name = "pbroadcast", .alias = "",
     .summary = "broadcast of c elements from rank --root",
     .reduces = Reduces::kNo, .rooted = true, .sweeps = true,
     .kind = meshsim::Collective::kBroadcast, .input_count = whole,
     .bus_factor = unit_factor, .bus_formula = "1",
     .floor_bytes = floor_zero_copy, .floor_formula = "0 (zero-copy)",
     .prepare = prepare_pbroadcast, .run = run_pbroadcast},
    {.name = "ragged_all_to_all", .alias = "",
     .summary = "n*(c/n) rows split between peers by seeded random sizes (--seed)",
     .reduces = Reduces::kNo, .rooted = false, .sweeps = true,
     .kind = std::nullopt, .input_count = n_blocks,
     .bus_factor = spread_factor, .bus_formula = "(n-1)/n",
     .floor_bytes = floor_one_pass, .floor_formula = "N*S",
     .prepare = prepare_ragged, .run = run_ragged},
    {.name = "barrier", .alias = "",
     .summary = "psum of one int32 per device (one row; -b/-e/-f/--dtype ignored)",
     .reduces = Reduces::kNo, .rooted = false, .sweeps = false,
     .kind = std::nullopt, .input_count = one_element,
     .bus_factor = all_reduce_factor, .bus_formula = "2(n-1)/n",
     .floor_bytes = floor_zero_copy, .floor_formula = "0",
     .prepare = prepare_barrier, .run = run_barrier},
};
// clang-format on

}  // namespace

std::span<const Collective> collectives() { return kCollectives; }

const Collective* find_collective(std::string_view name) {
  for (const Collective& c : kCollectives) {
    if (c.name == name || (!c.alias.empty() && c.alias == name)) return &c;
  }
  return nullptr;
}

CallShape call_shape(const Collective& collective, const BenchParams& params, int n,
                     int num_axes, size_t bytes) {
  const int64_t count =
      collective.input_count(static_cast<int64_t>(bytes / dtype_size(params.dtype)), n);
  return {.collective = *collective.kind,
          .group_size = n,
          .bytes = static_cast<size_t>(count) * dtype_size(params.dtype),
          .count = count,
          .op = params.op,
          .num_axes = num_axes};
}

Bandwidth bandwidth(const Collective& collective, size_t size, double seconds, int n) {
  if (seconds <= 0) return {};
  const double algbw = static_cast<double>(size) / seconds / 1e9;
  return {.algbw = algbw, .busbw = algbw * collective.bus_factor(n)};
}

}  // namespace meshsim::cli
