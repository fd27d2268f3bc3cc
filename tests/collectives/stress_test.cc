// Stress: seeded random SPMD programs against sequential host references.
//
// Each seed draws a mesh (1-3 axes, up to 64 devices, so more device threads
// than cores; device ids permuted, some runtime devices left out) and a
// program of 20-200 collectives, each over a random non-empty list of axes in
// random order, sometimes with random axis_index_groups where the op takes
// them, on float64 / int32 / int64 data of small integers (exact sums) and on
// bfloat16 / float16 (checked against float32 accumulation). Every device
// keeps a state of a fixed size: an op's input is the state cast and
// reshaped, and its output, folded back to the state's size and to small
// integers by a local step, is the next state. Collectives with a *_start
// form (collectives/async.h) are sometimes issued async: their handles stay
// pending across up to 4 later collectives, several at once, are finished
// newest first, and their results are folded into the state then.
// The program runs in launches of kOpsPerLaunch ops (inside a launch devices
// run ahead of each other); after each launch every device's result of every
// op is compared with support/reference_collectives.h, computed from all
// devices' recorded inputs.
//
// Seeds: MESHSIM_STRESS_SEEDS="N" registers seeds 0..N-1 (default 40),
// "F:N" seeds F..F+N-1. A failure names the seed, the op index, the op with
// its parameters and the device, and the command that replays it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "meshsim/meshsim.h"
#include "meshsim/mesh/internal/format.h"
#include "support/reference_collectives.h"

namespace meshsim::stress_test {
namespace {

namespace ref = reference;

constexpr int kMaxDevices = 64;
constexpr int kOpsPerLaunch = 16;
constexpr int kDefaultSeeds = 40;

// Draws from mt19937_64 by plain arithmetic: the std distributions differ
// between standard libraries, and a seed must replay the same program.
class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  // Uniform in [lo, hi].
  int64_t in(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool chance(int percent) { return in(0, 99) < percent; }
  template <class T>
  const T& pick(const std::vector<T>& values) {
    return values[in(0, static_cast<int64_t>(values.size()) - 1)];
  }
  template <class T>
  void shuffle(std::vector<T>& values) {
    for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[in(0, i - 1)]);
  }

 private:
  std::mt19937_64 rng_;
};

enum class Kind {
  kPsum, kPmax, kPmin, kPmean, kAllGather, kPsumScatter, kAllToAll, kPswapaxes, kPargmax,
  kPargmin, kPpermute, kPshuffle, kPbroadcast, kRaggedAllToAll,
};
constexpr int kNumKinds = 14;
constexpr const char* kKindNames[kNumKinds] = {
    "psum",      "pmax",    "pmin",    "pmean",    "all_gather", "psum_scatter", "all_to_all",
    "pswapaxes", "pargmax", "pargmin", "ppermute", "pshuffle",   "pbroadcast",   "ragged_all_to_all"};

bool takes_uneven_groups(Kind k) {
  return k == Kind::kPsum || k == Kind::kPmax || k == Kind::kPmin || k == Kind::kPmean;
}
bool takes_equal_groups(Kind k) {
  return k == Kind::kAllGather || k == Kind::kPsumScatter || k == Kind::kAllToAll ||
         k == Kind::kPswapaxes || k == Kind::kRaggedAllToAll;
}
// Has a *_start form in collectives/async.h.
bool has_start(Kind k) {
  return k == Kind::kPsum || k == Kind::kAllGather || k == Kind::kPsumScatter ||
         k == Kind::kAllToAll || k == Kind::kPbroadcast || k == Kind::kPpermute;
}

struct Op {
  Kind kind = Kind::kPsum;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
  DType dtype = DType::kFloat64;
  Shape shape;  // of x; of operand and output for ragged_all_to_all
  // all_gather axis, scatter_dimension, split_axis or pswapaxes axis, as passed
  // (negative counts from the end).
  int axis = 0;
  int concat_axis = 0;
  bool tiled = false;
  std::vector<std::pair<int, int>> perm;  // ppermute
  std::vector<int> shuffle;               // pshuffle
  int source = 0;                         // pbroadcast
  std::vector<ref::RaggedIndices> ragged;  // by rank
  DType index_dtype = DType::kInt32;       // ragged_all_to_all
  // Issued as *_start; done() before op #done_before (or at the end of its launch).
  bool async = false;
  int done_before = 0;

  std::string to_string() const;
};

std::string Op::to_string() const {
  std::string s = std::string(kKindNames[static_cast<int>(kind)]) + (async ? "_start(" : "(") +
                  std::string(dtype_name(dtype)) + shape_to_string(shape) +
                  ", axes=" + format_axes(axes);
  const std::string tiled_text = tiled ? "True" : "False";
  switch (kind) {
    case Kind::kAllGather:
      s += ", axis=" + std::to_string(axis) + ", tiled=" + tiled_text;
      break;
    case Kind::kPsumScatter:
      s += ", scatter_dimension=" + std::to_string(axis) + ", tiled=" + tiled_text;
      break;
    case Kind::kAllToAll:
      s += ", split_axis=" + std::to_string(axis) + ", concat_axis=" + std::to_string(concat_axis) +
           ", tiled=" + tiled_text;
      break;
    case Kind::kPswapaxes: s += ", axis=" + std::to_string(axis); break;
    case Kind::kPpermute: {
      s += ", perm=[";
      for (size_t i = 0; i < perm.size(); ++i) {
        s += (i ? ", (" : "(") + std::to_string(perm[i].first) + ", " +
             std::to_string(perm[i].second) + ")";
      }
      s += "]";
      break;
    }
    case Kind::kPshuffle: s += ", perm=" + format_ints<int>(shuffle); break;
    case Kind::kPbroadcast: s += ", source=" + std::to_string(source); break;
    case Kind::kRaggedAllToAll:
      s += ", indices " + std::string(dtype_name(index_dtype)) + " by rank:";
      for (size_t r = 0; r < ragged.size(); ++r) {
        s += " [" + std::to_string(r) + "] input_offsets=" + format_ints<int64_t>(ragged[r].input_offsets) +
             " send_sizes=" + format_ints<int64_t>(ragged[r].send_sizes) +
             " output_offsets=" + format_ints<int64_t>(ragged[r].output_offsets) +
             " recv_sizes=" + format_ints<int64_t>(ragged[r].recv_sizes);
      }
      break;
    default: break;
  }
  if (async) s += ", done before op #" + std::to_string(done_before);
  if (!groups.empty()) {
    s += ", axis_index_groups=[";
    for (size_t g = 0; g < groups.size(); ++g) s += (g ? ", " : "") + format_ints<int>(groups[g]);
    s += "]";
  }
  return s + ")";
}

struct Program {
  uint64_t seed = 0;
  std::vector<std::pair<std::string, int>> mesh_axes;
  std::vector<int> device_ids;  // at each mesh position
  int runtime_devices = 0;
  int64_t state_size = 0;
  std::vector<std::vector<double>> initial_state;  // per mesh position
  std::vector<Op> ops;

  int num_positions() const { return static_cast<int>(device_ids.size()); }
};

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// 1-3 axes with distinct names. A full mesh has exactly 64 devices (powers
// of two); others have sizes from 1 to 8, non-powers of two included.
std::vector<std::pair<std::string, int>> draw_mesh(Draw& d, bool full) {
  std::vector<std::string> names = {"x", "y", "z", "data", "model", "expert"};
  d.shuffle(names);
  const int num_axes = static_cast<int>(d.in(1, 3));
  std::vector<int> sizes(num_axes, 1);
  if (full) {
    for (int bit = 0; bit < 6; ++bit) sizes[d.in(0, num_axes - 1)] *= 2;
  } else {
    int total = 1;
    for (int& size : sizes) {
      std::vector<int> fitting;
      for (int s : {1, 2, 3, 4, 5, 6, 8}) {
        if (total * s <= kMaxDevices) fitting.push_back(s);
      }
      size = d.pick(fitting);
      total *= size;
    }
  }
  std::vector<std::pair<std::string, int>> axes;
  for (int a = 0; a < num_axes; ++a) axes.emplace_back(names[a], sizes[a]);
  return axes;
}

// Covers 0..size-1 once; groups of one size (a random divisor) if `equal`.
AxisIndexGroups draw_groups(Draw& d, int size, bool equal) {
  std::vector<int> indices(size);
  std::iota(indices.begin(), indices.end(), 0);
  d.shuffle(indices);
  const int64_t per_group = equal ? size / d.pick(divisors(size)) : 0;
  AxisIndexGroups groups;
  for (int i = 0; i < size; ++i) {
    const bool start = equal ? i % per_group == 0 : groups.empty() || d.chance(35);
    if (start) groups.emplace_back();
    groups.back().push_back(indices[i]);
  }
  return groups;
}

// `total` elements in `rank` dims. If pos >= 0, dim pos is `multiple`
// (exact) or a multiple of it; total must be a multiple of it, and for an
// exact rank-1 shape equal to it.
Shape draw_shape(Draw& d, int64_t total, int rank, int pos = -1, int64_t multiple = 1,
                 bool exact = false) {
  Shape shape(rank, 1);
  int64_t rest = total;
  if (pos >= 0) {
    shape[pos] = exact ? multiple : multiple * d.pick(divisors(rest / multiple));
    rest /= shape[pos];
  }
  int last_free = -1;
  for (int i = 0; i < rank; ++i) {
    if (i != pos) last_free = i;
  }
  for (int i = 0; i < rank; ++i) {
    if (i == pos || i == last_free) continue;
    shape[i] = d.pick(divisors(rest));
    rest /= shape[i];
  }
  if (last_free >= 0) {
    shape[last_free] = rest;
  } else {
    shape[pos] *= rest;
  }
  return shape;
}

int maybe_negative(Draw& d, int axis, int rank) { return d.chance(25) ? axis - rank : axis; }

// Sizes bounded so that no sender sends and no receiver receives more than
// the operand's rows; each receiver's slices packed in random order after a
// random gap.
std::vector<ref::RaggedIndices> draw_ragged(Draw& d, int n, int64_t rows) {
  const int per_peer = static_cast<int>(d.in(1, 2));
  const int entries = n * per_peer;
  std::vector<ref::RaggedIndices> by_rank(n);
  for (auto& r : by_rank) {
    for (auto* v : {&r.input_offsets, &r.send_sizes, &r.output_offsets, &r.recv_sizes}) {
      v->assign(entries, 0);
    }
  }
  std::vector<std::pair<int, int>> order;  // (sender, entry)
  for (int s = 0; s < n; ++s) {
    for (int e = 0; e < entries; ++e) order.emplace_back(s, e);
  }
  d.shuffle(order);
  std::vector<int64_t> send_left(n, rows), recv_left(n, rows);
  const int64_t cap = std::max<int64_t>(1, 2 * rows / entries);
  for (const auto& [s, e] : order) {
    const int r = e / per_peer;
    const int64_t size = d.in(0, std::min({cap, send_left[s], recv_left[r]}));
    send_left[s] -= size;
    recv_left[r] -= size;
    by_rank[s].send_sizes[e] = size;
    by_rank[s].input_offsets[e] = d.in(0, rows - size);
    by_rank[r].recv_sizes[s * per_peer + e % per_peer] = size;
  }
  for (int r = 0; r < n; ++r) {
    std::vector<std::pair<int, int>> slices;  // (sender, entry) addressed to r
    for (int s = 0; s < n; ++s) {
      for (int t = 0; t < per_peer; ++t) slices.emplace_back(s, r * per_peer + t);
    }
    d.shuffle(slices);
    int64_t offset = d.in(0, recv_left[r]);
    for (const auto& [s, e] : slices) {
      by_rank[s].output_offsets[e] = offset;
      offset += by_rank[s].send_sizes[e];
    }
  }
  return by_rank;
}

Op draw_op(Draw& d, const Program& program, int index, int num_ops) {
  Op op;
  op.kind = static_cast<Kind>(d.in(0, kNumKinds - 1));
  const bool one_axis = op.kind == Kind::kPargmax || op.kind == Kind::kPargmin;
  std::vector<std::string> names;
  for (const auto& axis : program.mesh_axes) names.push_back(axis.first);
  d.shuffle(names);
  names.resize(one_axis ? 1 : d.in(1, static_cast<int64_t>(names.size())));
  op.axes = names;
  int size = 1;
  for (const auto& [name, axis_size] : program.mesh_axes) {
    if (std::find(names.begin(), names.end(), name) != names.end()) size *= axis_size;
  }
  const bool equal = takes_equal_groups(op.kind);
  if ((equal || takes_uneven_groups(op.kind)) && size > 1 && d.chance(30)) {
    op.groups = draw_groups(d, size, equal);
  }
  const int group_size = op.groups.empty() ? size : static_cast<int>(op.groups[0].size());
  op.dtype = d.pick(std::vector<DType>{DType::kFloat64, DType::kFloat64, DType::kFloat64,
                                       DType::kFloat64, DType::kInt32, DType::kInt32, DType::kInt64,
                                       DType::kInt64, DType::kBFloat16, DType::kFloat16});
  const int64_t total = program.state_size;
  int rank = static_cast<int>(d.in(1, 3));
  // A dim that must equal the group size (stacked) or be a multiple of it (tiled).
  const auto constrained_shape = [&](bool exact) {
    if (exact && total != group_size) rank = static_cast<int>(d.in(2, 3));
    const int pos = static_cast<int>(d.in(0, rank - 1));
    op.shape = draw_shape(d, total, rank, pos, group_size, exact);
    return maybe_negative(d, pos, rank);
  };
  switch (op.kind) {
    case Kind::kAllGather: {
      op.tiled = d.chance(50);
      op.shape = draw_shape(d, total, rank);
      const int positions = op.tiled ? rank : rank + 1;  // the stacked dim may go last
      op.axis = maybe_negative(d, static_cast<int>(d.in(0, positions - 1)), positions);
      break;
    }
    case Kind::kPsumScatter:
      op.tiled = d.chance(50);
      op.axis = constrained_shape(!op.tiled);
      break;
    case Kind::kAllToAll:
      op.tiled = d.chance(50);
      op.axis = constrained_shape(!op.tiled);
      op.concat_axis = maybe_negative(d, static_cast<int>(d.in(0, rank - 1)), rank);
      break;
    case Kind::kPswapaxes: op.axis = constrained_shape(true); break;
    case Kind::kPpermute: {
      std::vector<int> destinations(size);
      std::iota(destinations.begin(), destinations.end(), 0);
      d.shuffle(destinations);
      for (int s = 0; s < size; ++s) {
        if (d.chance(75)) op.perm.emplace_back(s, destinations[s]);
      }
      d.shuffle(op.perm);
      op.shape = draw_shape(d, total, rank);
      break;
    }
    case Kind::kPshuffle:
      op.shuffle.resize(size);
      std::iota(op.shuffle.begin(), op.shuffle.end(), 0);
      d.shuffle(op.shuffle);
      op.shape = draw_shape(d, total, rank);
      break;
    case Kind::kPbroadcast:
      op.source = static_cast<int>(d.in(0, size - 1));
      op.shape = draw_shape(d, total, rank);
      break;
    case Kind::kRaggedAllToAll:
      op.shape = draw_shape(d, total, rank);
      op.index_dtype = d.chance(50) ? DType::kInt32 : DType::kInt64;
      op.ragged = draw_ragged(d, group_size, op.shape[0]);
      break;
    default: op.shape = draw_shape(d, total, rank); break;
  }
  if (has_start(op.kind) && d.chance(30)) {
    op.async = true;
    const int launch_end = std::min((index / kOpsPerLaunch + 1) * kOpsPerLaunch, num_ops);
    op.done_before = std::min(index + static_cast<int>(d.in(1, 4)), launch_end);
  }
  return op;
}

Program draw_program(uint64_t seed) {
  Draw d(seed * 0x9E3779B97F4A7C15ull + 1);
  Program p;
  p.seed = seed;
  p.mesh_axes = draw_mesh(d, seed % 4 == 0);
  int n = 1;
  for (const auto& axis : p.mesh_axes) n *= axis.second;
  p.runtime_devices = n + static_cast<int>(d.in(0, 2));
  std::vector<int> ids(p.runtime_devices);
  std::iota(ids.begin(), ids.end(), 0);
  d.shuffle(ids);
  p.device_ids.assign(ids.begin(), ids.begin() + n);
  // A multiple of the device count, so every group size divides it; at least 8.
  p.state_size = n * d.in(1, 3) * std::max(1, 8 / n);
  p.initial_state.resize(n);
  for (auto& state : p.initial_state) {
    for (int64_t i = 0; i < p.state_size; ++i) state.push_back(static_cast<double>(d.in(-8, 8)));
  }
  const int num_ops = static_cast<int>(d.in(20, 200));
  for (int k = 0; k < num_ops; ++k) p.ops.push_back(draw_op(d, p, k, num_ops));
  return p;
}

// ---- What every device runs ------------------------------------------------

struct Record {
  Array input;
  Array buffer;  // ragged_all_to_all's output argument
  Array output;
};

Array to_array(const std::vector<double>& values) {
  return Array::from_values<double>({static_cast<int64_t>(values.size())}, std::span<const double>(values));
}

// The device's own computation between collectives: the state (if `base`)
// plus the op's output folded to the state's size (summed modulo the size if
// longer, repeated if shorter), brought back to integers in [-8, 8], mixed
// with the position and op index so devices and steps keep distinct values.
Array local_step(const Array* base, const Array& output, int position, int op, int64_t size) {
  std::vector<double> acc = base ? ref::to_host(*base).values : std::vector<double>(size, 0.0);
  const std::vector<double> out = ref::to_host(output).values;
  const int64_t m = static_cast<int64_t>(out.size());
  for (int64_t i = 0; i < std::max(m, size); ++i) acc[i % size] += out[i % m];
  for (int64_t i = 0; i < size; ++i) {
    const int64_t v = std::llround(acc[i]) + 5 * position + 3 * i + op;
    acc[i] = static_cast<double>(((v % 17) + 17) % 17 - 8);
  }
  return to_array(acc);
}

// The device's rank in its group, as SPMD code finds it.
int group_rank(const DeviceContext& ctx, const Op& op) {
  const int index = ctx.axis_index(op.axes);
  for (const auto& group : op.groups) {
    const auto it = std::find(group.begin(), group.end(), index);
    if (it != group.end()) return static_cast<int>(it - group.begin());
  }
  return index;
}

Array index_array(const std::vector<int64_t>& values, DType dtype) {
  return Array::from_values<int64_t>({static_cast<int64_t>(values.size())},
                                     std::span<const int64_t>(values))
      .astype(dtype);
}

AllGatherOptions all_gather_options(const Op& op) {
  return {.axis = op.axis, .tiled = op.tiled, .axis_index_groups = op.groups};
}
PsumScatterOptions psum_scatter_options(const Op& op) {
  return {.scatter_dimension = op.axis, .tiled = op.tiled, .axis_index_groups = op.groups};
}
AllToAllOptions all_to_all_options(const Op& op) {
  return {.tiled = op.tiled, .axis_index_groups = op.groups};
}

Array run_op(DeviceContext& ctx, const Op& op, const Record& rec) {
  const Array& x = rec.input;
  switch (op.kind) {
    case Kind::kPsum: return psum(ctx, x, op.axes, op.groups);
    case Kind::kPmax: return pmax(ctx, x, op.axes, op.groups);
    case Kind::kPmin: return pmin(ctx, x, op.axes, op.groups);
    case Kind::kPmean: return pmean(ctx, x, op.axes, op.groups);
    case Kind::kAllGather: return all_gather(ctx, x, op.axes, all_gather_options(op));
    case Kind::kPsumScatter: return psum_scatter(ctx, x, op.axes, psum_scatter_options(op));
    case Kind::kAllToAll:
      return all_to_all(ctx, x, op.axes, op.axis, op.concat_axis, all_to_all_options(op));
    case Kind::kPswapaxes: return pswapaxes(ctx, x, op.axes, op.axis, op.groups);
    case Kind::kPargmax: return pargmax(ctx, x, op.axes);
    case Kind::kPargmin: return pargmin(ctx, x, op.axes);
    case Kind::kPpermute: return ppermute(ctx, x, op.axes, op.perm);
    case Kind::kPshuffle: return pshuffle(ctx, x, op.axes, op.shuffle);
    case Kind::kPbroadcast: return pbroadcast(ctx, x, op.axes, op.source);
    case Kind::kRaggedAllToAll: {
      const ref::RaggedIndices& mine = op.ragged[group_rank(ctx, op)];
      return ragged_all_to_all(ctx, x, rec.buffer, index_array(mine.input_offsets, op.index_dtype),
                               index_array(mine.send_sizes, op.index_dtype),
                               index_array(mine.output_offsets, op.index_dtype),
                               index_array(mine.recv_sizes, op.index_dtype), op.axes, op.groups);
    }
  }
  throw InvalidArgumentError("run_op: unknown kind in " + op.to_string());
}

// The *_start form of an op for which has_start() holds.
Pending start_op(DeviceContext& ctx, const Op& op, const Record& rec) {
  const Array& x = rec.input;
  switch (op.kind) {
    case Kind::kPsum: return psum_start(ctx, x, op.axes, op.groups);
    case Kind::kAllGather: return all_gather_start(ctx, x, op.axes, all_gather_options(op));
    case Kind::kPsumScatter: return psum_scatter_start(ctx, x, op.axes, psum_scatter_options(op));
    case Kind::kAllToAll:
      return all_to_all_start(ctx, x, op.axes, op.axis, op.concat_axis, all_to_all_options(op));
    case Kind::kPbroadcast: return pbroadcast_start(ctx, x, op.axes, op.source);
    case Kind::kPpermute: return ppermute_start(ctx, x, op.axes, op.perm);
    default: break;
  }
  throw InvalidArgumentError("start_op: no async form of " + op.to_string());
}

// Ops [begin, end) on one device; records[k - begin] holds op k's record.
// `reached` is the op the device last started, for a failed launch's report.
void run_ops(DeviceContext& ctx, const Program& program, int begin, int end, Array& state,
             std::vector<Record*> records, int& reached) {
  const int position = ctx.position();
  const int64_t size = program.state_size;
  std::vector<std::pair<int, Pending>> pending;  // (op index, handle), oldest first
  // done() on the handles due before op `before`, newest first.
  const auto finish_due = [&](int before) {
    for (size_t i = pending.size(); i-- > 0;) {
      const int k = pending[i].first;
      if (program.ops[k].done_before > before) continue;
      records[k - begin]->output = pending[i].second.done();
      state = local_step(&state, records[k - begin]->output, position, k, size);
      pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    }
  };
  for (int k = begin; k < end; ++k) {
    finish_due(k);
    reached = k;
    const Op& op = program.ops[k];
    Record& rec = *records[k - begin];
    rec.input = state.astype(op.dtype).reshape(op.shape);
    if (op.kind == Kind::kRaggedAllToAll) {
      std::vector<double> reversed = ref::to_host(state).values;
      std::reverse(reversed.begin(), reversed.end());
      for (double& v : reversed) v = -v;
      rec.buffer = to_array(reversed).astype(op.dtype).reshape(op.shape);
    }
    if (op.async) {
      pending.emplace_back(k, start_op(ctx, op, rec));
      continue;
    }
    rec.output = run_op(ctx, op, rec);
    state = local_step(nullptr, rec.output, position, k, size);
  }
  finish_due(end);
}

// ---- Checking -----------------------------------------------------------------

int canonical(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

// What the member of rank `rank` must receive; `mine` is its own record.
ref::HostArray expected_result(const Op& op, const ref::Members& members, int rank,
                               const Record& mine) {
  const int x_rank = static_cast<int>(op.shape.size());
  switch (op.kind) {
    case Kind::kPsum: return ref::reduce(ref::Reduction::kSum, members);
    case Kind::kPmax: return ref::reduce(ref::Reduction::kMax, members);
    case Kind::kPmin: return ref::reduce(ref::Reduction::kMin, members);
    case Kind::kPmean: return ref::reduce(ref::Reduction::kMean, members);
    case Kind::kAllGather:
      return ref::all_gather(members, canonical(op.axis, x_rank + (op.tiled ? 0 : 1)), op.tiled);
    case Kind::kPsumScatter:
      return ref::psum_scatter(members, rank, canonical(op.axis, x_rank), op.tiled);
    case Kind::kAllToAll:
      return ref::all_to_all(members, rank, canonical(op.axis, x_rank),
                             canonical(op.concat_axis, x_rank), op.tiled);
    case Kind::kPswapaxes: {
      const int axis = canonical(op.axis, x_rank);
      return ref::all_to_all(members, rank, axis, axis, false);
    }
    case Kind::kPargmax: return ref::argreduce(true, members);
    case Kind::kPargmin: return ref::argreduce(false, members);
    case Kind::kPpermute: {
      for (const auto& [source, destination] : op.perm) {
        if (destination == rank) return *members[source];
      }
      ref::HostArray zeros = *members[rank];
      std::fill(zeros.values.begin(), zeros.values.end(), 0.0);
      return zeros;
    }
    case Kind::kPshuffle: return *members[op.shuffle[rank]];
    case Kind::kPbroadcast: return *members[op.source];
    case Kind::kRaggedAllToAll:
      return ref::ragged_all_to_all(members, op.ragged, rank, ref::to_host(mine.buffer));
  }
  return {};
}

std::string mesh_text(const Program& p) {
  return Mesh(AbstractMesh(p.mesh_axes), p.device_ids).to_string() + " on a runtime of " +
         std::to_string(p.runtime_devices) + " devices";
}

std::string replay_text(const Program& p) {
  return "replay: MESHSIM_STRESS_SEEDS=" + std::to_string(p.seed) +
         ":1 <test binary> --gtest_filter='*StressTest*seed_" + std::to_string(p.seed) + "'";
}

// Compares every device's result of ops [begin, begin + records.size()) with
// the reference; reports the first difference and returns false.
bool check(const Program& program, int begin, const std::vector<std::vector<Record>>& records) {
  const int n = program.num_positions();
  for (size_t j = 0; j < records.size(); ++j) {
    const int k = begin + static_cast<int>(j);
    const Op& op = program.ops[k];
    const ref::Groups groups = ref::groups_of(program.mesh_axes, op.axes, op.groups);
    std::vector<ref::HostArray> inputs(n);
    for (int p = 0; p < n; ++p) inputs[p] = ref::to_host(records[j][p].input);
    for (int p = 0; p < n; ++p) {
      ref::Members members;
      for (int q : groups.members[groups.group_of[p]]) members.push_back(&inputs[q]);
      const std::string diff = ref::difference(
          expected_result(op, members, groups.rank_of[p], records[j][p]), records[j][p].output);
      if (!diff.empty()) {
        ADD_FAILURE() << "seed " << program.seed << ", op #" << k << " of " << program.ops.size()
                      << ": " << op.to_string() << "\non " << mesh_text(program) << ", position "
                      << p << " (device " << program.device_ids[p] << ", rank "
                      << groups.rank_of[p] << "): " << diff << "\n" << replay_text(program);
        return false;
      }
    }
  }
  return true;
}

// ---- The suite --------------------------------------------------------------

std::vector<uint64_t> stress_seeds() {
  uint64_t first = 0;
  uint64_t count = kDefaultSeeds;
  // Empty means unset; anything else malformed stops the executable with a
  // message naming the variable (this runs before main, at registration).
  if (const char* env = std::getenv("MESHSIM_STRESS_SEEDS"); env != nullptr && *env != '\0') {
    const std::string text = env;
    const auto number = [&text](const std::string& part) {
      if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("MESHSIM_STRESS_SEEDS='" + text +
                                    "': expected COUNT or FIRST:COUNT");
      }
      return std::stoull(part);
    };
    const size_t colon = text.find(':');
    if (colon == std::string::npos) {
      count = number(text);
    } else {
      first = number(text.substr(0, colon));
      count = number(text.substr(colon + 1));
    }
  }
  std::vector<uint64_t> seeds(count);
  std::iota(seeds.begin(), seeds.end(), first);
  return seeds;
}

class StressTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(StressTest, RandomProgramMatchesReference) {
  const Program program = draw_program(GetParam());
  const int n = program.num_positions();
  Runtime rt(program.runtime_devices);
  const Mesh mesh(AbstractMesh(program.mesh_axes), program.device_ids);
  std::vector<Array> states;
  for (const auto& state : program.initial_state) states.push_back(to_array(state));
  const int num_ops = static_cast<int>(program.ops.size());
  for (int begin = 0; begin < num_ops; begin += kOpsPerLaunch) {
    const int end = std::min(begin + kOpsPerLaunch, num_ops);
    std::vector<std::vector<Record>> records(end - begin, std::vector<Record>(n));
    std::vector<int> reached(n, -1);
    try {
      rt.launch(mesh, [&](DeviceContext& ctx) {
        const int p = ctx.position();
        std::vector<Record*> mine;
        for (auto& op_records : records) mine.push_back(&op_records[p]);
        run_ops(ctx, program, begin, end, states[p], std::move(mine), reached[p]);
      });
    } catch (const std::exception& e) {
      std::string where;
      for (int k : std::set<int>(reached.begin(), reached.end())) {
        if (k >= 0) where += "\n  op #" + std::to_string(k) + ": " + program.ops[k].to_string();
      }
      FAIL() << "seed " << program.seed << ": the launch of ops #" << begin << "-#" << end - 1
             << " on " << mesh_text(program) << " failed: " << e.what()
             << "\ndevices had last started:" << where << "\n" << replay_text(program);
    }
    if (!check(program, begin, records)) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, StressTest, ::testing::ValuesIn(stress_seeds()),
                         [](const ::testing::TestParamInfo<uint64_t>& info) {
                           return "seed_" + std::to_string(info.param);
                         });

// The default seeds reach every collective, every *_start, groups, 16-bit
// floats and a 64-device mesh, so the suite stays a stress test of all of them.
TEST(StressCoverageTest, DefaultSeedsDrawEveryCollectiveAndSixtyFourDevices) {
  std::set<int> kinds, started;
  bool grouped = false, half_floats = false, full_mesh = false;
  for (uint64_t seed = 0; seed < kDefaultSeeds; ++seed) {
    const Program p = draw_program(seed);
    full_mesh |= p.num_positions() == kMaxDevices;
    EXPECT_GE(p.ops.size(), 20u);
    EXPECT_LE(p.ops.size(), 200u);
    for (const Op& op : p.ops) {
      kinds.insert(static_cast<int>(op.kind));
      if (op.async) started.insert(static_cast<int>(op.kind));
      grouped |= !op.groups.empty();
      half_floats |= op.dtype == DType::kBFloat16 || op.dtype == DType::kFloat16;
    }
  }
  EXPECT_EQ(kinds.size(), static_cast<size_t>(kNumKinds));
  EXPECT_EQ(started.size(), 6u);  // psum, all_gather, psum_scatter, all_to_all, pbroadcast, ppermute
  EXPECT_TRUE(grouped);
  EXPECT_TRUE(half_floats);
  EXPECT_TRUE(full_mesh);
}

// ---- The references against the JAX docstrings ----------------------------

ref::HostArray host(DType dtype, Shape shape, std::vector<double> values) {
  return {dtype, std::move(shape), std::move(values)};
}

// jax.lax.psum docstring: psum(arange(4), 'i', axis_index_groups=[[0, 1], [2, 3]]) = [1, 1, 5, 5].
TEST(ReferenceCollectivesTest, PsumDocstringGroups) {
  const ref::Groups groups = ref::groups_of({{"i", 4}}, {"i"}, {{0, 1}, {2, 3}});
  std::vector<ref::HostArray> x;
  for (int i = 0; i < 4; ++i) x.push_back(host(DType::kInt32, {}, {static_cast<double>(i)}));
  std::vector<double> out;
  for (int p = 0; p < 4; ++p) {
    ref::Members members;
    for (int q : groups.members[groups.group_of[p]]) members.push_back(&x[q]);
    out.push_back(ref::reduce(ref::Reduction::kSum, members).values[0]);
  }
  EXPECT_EQ(out, (std::vector<double>{1, 1, 5, 5}));
}

// On (i=4, j=2), axes ('j', 'i') give position i*2+j the axis index j*4+i.
TEST(ReferenceCollectivesTest, GroupsRankTupleAxesMajorToMinor) {
  const ref::Groups groups = ref::groups_of({{"i", 4}, {"j", 2}}, {"j", "i"}, {});
  ASSERT_EQ(groups.members.size(), 1u);
  EXPECT_EQ(groups.members[0], (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7}));
}

// bfloat16 sums accumulate in float32 and round once: 256 + 1 + 1 = 258.
TEST(ReferenceCollectivesTest, BFloat16SumRoundsOnce) {
  const ref::HostArray a = host(DType::kBFloat16, {1}, {256}), b = host(DType::kBFloat16, {1}, {1});
  EXPECT_EQ(ref::reduce(ref::Reduction::kSum, {&a, &b, &b}).values[0], 258);
  EXPECT_EQ(ref::reduce(ref::Reduction::kMean, {&a, &b}).values[0], 128);  // 257 / 2 rounds to 128
}

// The shard_map tutorial's tiled all_to_all of [3 1 4 1 5 9 2 6 5 3 5 8 9 7 1 2] over 4 devices.
TEST(ReferenceCollectivesTest, AllToAllTutorial) {
  const double v[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2};
  std::vector<ref::HostArray> x;
  for (int d = 0; d < 4; ++d) x.push_back(host(DType::kInt32, {4}, {v + 4 * d, v + 4 * d + 4}));
  const ref::Members members = {&x[0], &x[1], &x[2], &x[3]};
  std::vector<double> out;
  for (int r = 0; r < 4; ++r) {
    const auto part = ref::all_to_all(members, r, 0, 0, true).values;
    out.insert(out.end(), part.begin(), part.end());
  }
  EXPECT_EQ(out, (std::vector<double>{3, 5, 5, 9, 1, 9, 3, 7, 4, 2, 5, 1, 1, 6, 8, 2}));
}

// all_gather of x_r = [r, 10 + r] over 2: stacked on axis 1 [[0 1] [10 11]], tiled [0 10 1 11].
// psum_scatter of the same, stacked on axis 0: rank r keeps the sum at index r.
TEST(ReferenceCollectivesTest, AllGatherAndPsumScatterByHand) {
  const ref::HostArray x0 = host(DType::kFloat64, {2}, {0, 10}), x1 = host(DType::kFloat64, {2}, {1, 11});
  const ref::HostArray stacked = ref::all_gather({&x0, &x1}, 1, false);
  EXPECT_EQ(stacked.shape, (Shape{2, 2}));
  EXPECT_EQ(stacked.values, (std::vector<double>{0, 1, 10, 11}));
  EXPECT_EQ(ref::all_gather({&x0, &x1}, 0, true).values, (std::vector<double>{0, 10, 1, 11}));
  EXPECT_EQ(ref::psum_scatter({&x0, &x1}, 1, 0, false).values, (std::vector<double>{21}));
}

// jax.lax.ragged_all_to_all docstring example, axis of size 2: results [1, 3, 0, 0] and [2, 2, 4, 0].
TEST(ReferenceCollectivesTest, RaggedAllToAllDocstring) {
  const ref::HostArray op0 = host(DType::kInt32, {3}, {1, 2, 2}), op1 = host(DType::kInt32, {3}, {3, 4, 0});
  const ref::HostArray output = host(DType::kInt32, {4}, {0, 0, 0, 0});
  const std::vector<ref::RaggedIndices> indices = {{{0, 1}, {1, 2}, {0, 0}, {1, 1}},
                                                   {{0, 1}, {1, 1}, {1, 2}, {2, 1}}};
  EXPECT_EQ(ref::ragged_all_to_all({&op0, &op1}, indices, 0, output).values,
            (std::vector<double>{1, 3, 0, 0}));
  EXPECT_EQ(ref::ragged_all_to_all({&op0, &op1}, indices, 1, output).values,
            (std::vector<double>{2, 2, 4, 0}));
}

}  // namespace
}  // namespace meshsim::stress_test
