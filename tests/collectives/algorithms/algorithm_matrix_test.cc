// The algorithm matrix: every algorithm the runtime's registry lists — the
// built-ins and a user-registered all-reduce alike — runs through the public
// front-ends (psum / pmax / pmin / pmean, all_gather, psum_scatter,
// all_to_all, pbroadcast, barrier) and is compared with the same calls under
// "direct", over group sizes 1, 2, 3, 4, 5, 7, 8, 16 and 64, tuple axes,
// sub-axes of 2- and 3-axis meshes and axis_index_groups; every dtype and
// reduction op; element counts 0, 1, fewer than the group size, not divisible
// by it, divisible, and large enough for many segments (segment_bytes is set
// to 64 for every algorithm that declares it).
//
// Comparison:
// - Bitwise on exactly representable data: integers (any bits: wrap-around
//   is associative), bool, and floats holding small integers (|x| <= 3, so
//   every partial sum of up to 64 terms is exact even in bfloat16), and every
//   gather-type collective (raw bits, NaN patterns included).
// - Random floats (uniform in [-1, 1)) summed or averaged: within the
//   worst-case rounding bound of n-term sums in any order,
//     |algorithm - direct| <= 2·n·u·Σ_r |x_r|   (pmean: that / n, + u·|mean|)
//   with u the unit roundoff: 2^-53 float64, 2^-24 float32, 2^-11 float16,
//   2^-8 bfloat16 (partial sums round to the dtype between steps). Max and
//   min stay bitwise.
// Every member of a group gets bitwise identical results (all_reduce,
// all_gather, broadcast), under every algorithm. ctx.collective_records()
// names the algorithm that ran. An algorithm whose preconditions
// (AlgorithmInfo::preconditions / check) a call does not meet is skipped for
// that call, and forcing it must raise AlgorithmPreconditionError naming it.
//
// Cost: one launch per (mesh case, algorithm) runs all of a collective's
// calls; group size 64 only for a few dtypes. Test names:
//   MatrixSmall/AlgorithmMatrixTest.*  group sizes <= 5: the sanitizer subset
//   MatrixFull/AlgorithmMatrixTest.*   the rest (Release only)

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/algorithms/matrix_support.h"
#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/collectives/barrier.h"
#include "meshsim/meshsim.h"
#include "support/reference_collectives.h"

namespace meshsim::algorithm_matrix_test {
namespace {

using matrix::mesh_case;
using matrix::MeshCase;

enum class Fill {
  kExact,   // integers: any bits; floats: small integers; bool: 0 / 1
  kRandom,  // floats uniform in [-1, 1)
  kBits,    // any bit pattern (bool: 0 / 1), for collectives that only move data
};
enum class Kind { kSum, kMax, kMin, kMean };

// One front-end call of the matrix.
struct Call {
  Collective collective = Collective::kAllReduce;
  Kind kind = Kind::kSum;  // all_reduce only
  DType dtype = DType::kInt32;
  Shape shape;
  int param = 0;     // all_gather axis, scatter dimension, split axis, broadcast source
  int param2 = 0;    // all_to_all concat axis
  bool tiled = true;
  Fill fill = Fill::kExact;
  uint64_t seed = 0;

  std::string describe() const {
    std::string s = std::string(front_end()) + " " + std::string(dtype_name(dtype)) +
                    shape_to_string(shape);
    if (collective == Collective::kAllGather || collective == Collective::kReduceScatter ||
        collective == Collective::kAllToAll) {
      s += tiled ? " tiled" : " stacked";
      s += " axis " + std::to_string(param);
    }
    if (collective == Collective::kBroadcast) s += " source " + std::to_string(param);
    if (fill == Fill::kRandom) s += " random";
    return s;
  }
  std::string_view front_end() const {
    switch (collective) {
      case Collective::kAllReduce:
        return kind == Kind::kSum ? "psum" : kind == Kind::kMax ? "pmax"
                                           : kind == Kind::kMin ? "pmin" : "pmean";
      case Collective::kAllGather: return "all_gather";
      case Collective::kReduceScatter: return "psum_scatter";
      case Collective::kAllToAll: return "all_to_all";
      case Collective::kBroadcast: return "pbroadcast";
      case Collective::kBarrier: return "barrier";
    }
    return "?";
  }
};

uint64_t mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The input of mesh position `pos` for `call`: the same on every run.
Array make_input(const Call& call, int pos) {
  Array x = Array::empty(call.shape, call.dtype);
  visit_dtype(call.dtype, [&]<class T>(std::type_identity<T>) {
    std::span<T> v = x.mutable_span<T>();
    for (size_t i = 0; i < v.size(); ++i) {
      const uint64_t h = mix(call.seed * 0x100000001b3ull ^ mix(pos * 1000003ull + i));
      if constexpr (std::is_same_v<T, bool>) {
        v[i] = (h & 1) != 0;
      } else if constexpr (kIsFloatingType<T>) {
        if (call.fill == Fill::kExact) {
          v[i] = T(static_cast<float>(static_cast<int>(h % 7) - 3));
        } else if (call.fill == Fill::kRandom) {
          v[i] = T(static_cast<float>(static_cast<double>(h >> 11) * 0x1.0p-52 - 1.0));
        } else {
          std::memcpy(static_cast<void*>(&v[i]), &h, sizeof(T));
        }
      } else {
        std::memcpy(static_cast<void*>(&v[i]), &h, sizeof(T));
      }
    }
  });
  return x;
}

double unit_roundoff(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return 0x1.0p-53;
    case DType::kFloat32: return 0x1.0p-24;
    case DType::kFloat16: return 0x1.0p-11;
    case DType::kBFloat16: return 0x1.0p-8;
    default: return 0;
  }
}

std::vector<DType> dtypes_of(const MeshCase& c) {
  if (c.few_dtypes) return {DType::kInt32, DType::kBFloat16};
  return {kAllDTypes.begin(), kAllDTypes.end()};
}

// Element counts for a group of n: 0, 1, fewer than n, not divisible by n,
// divisible, and `big`: many segments of matrix::kSegmentBytes per step.
std::vector<int64_t> counts_of(int n, int64_t big) {
  std::vector<int64_t> counts = {0, 1, n - 1, 2 * n + 1, 3 * n, big};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// Every call of `collective` the matrix makes on a group of `n`.
std::vector<Call> calls_of(Collective collective, const MeshCase& c, int n) {
  std::vector<Call> calls;
  uint64_t seed = 1;
  auto add = [&](Call call) {
    call.collective = collective;
    call.seed = seed++;
    calls.push_back(std::move(call));
  };
  // all_reduce: n chunks of 64+ elements (4 on 64 devices, to keep them
  // cheap); the others: blocks of 519 elements per member (4 to 65 segments
  // by dtype), and all_to_all's n blocks of 67+ (7 on 64 devices).
  const std::vector<int64_t> counts = counts_of(n, (n < 64 ? 64 * std::max(n, 8) : 4 * n) + 7);
  const std::vector<int64_t> block_counts = counts_of(n, 64 * 8 + 7);
  const int64_t big_block = (n < 64 ? 64 * std::max(n, 8) / n : 4) + 3;
  for (DType dtype : dtypes_of(c)) {
    switch (collective) {
      case Collective::kAllReduce:
        for (Kind kind : {Kind::kSum, Kind::kMax, Kind::kMin, Kind::kMean}) {
          for (int64_t count : counts) {
            add({.kind = kind, .dtype = dtype, .shape = {count}, .fill = Fill::kExact});
            if (is_floating(dtype)) {
              add({.kind = kind, .dtype = dtype, .shape = {count}, .fill = Fill::kRandom});
            }
          }
        }
        add({.dtype = dtype, .shape = {3, 5}});  // a 2-d input
        break;
      case Collective::kReduceScatter:
        for (int64_t block : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{3}, big_block}) {
          add({.dtype = dtype, .shape = {n * block}});
          if (is_floating(dtype)) add({.dtype = dtype, .shape = {n * block}, .fill = Fill::kRandom});
        }
        add({.dtype = dtype, .shape = {2, n * 3}, .param = 1});
        add({.dtype = dtype, .shape = {n, 3}, .tiled = false});
        break;
      case Collective::kAllGather:
        for (int64_t count : block_counts) add({.dtype = dtype, .shape = {count}, .fill = Fill::kBits});
        add({.dtype = dtype, .shape = {3}, .tiled = false, .fill = Fill::kBits});
        add({.dtype = dtype, .shape = {2, 3}, .param = 1, .fill = Fill::kBits});
        break;
      case Collective::kAllToAll:
        for (int64_t block : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{5}, big_block}) {
          add({.dtype = dtype, .shape = {n * block}, .fill = Fill::kBits});
        }
        add({.dtype = dtype, .shape = {2, n * 3}, .param = 1, .param2 = 0, .fill = Fill::kBits});
        add({.dtype = dtype, .shape = {n, 2}, .param = 0, .param2 = 1, .tiled = false,
             .fill = Fill::kBits});
        break;
      case Collective::kBroadcast:
        for (int64_t count : block_counts) {
          for (int source : {0, n - 1, n / 2}) {
            add({.dtype = dtype, .shape = {count}, .param = source, .fill = Fill::kBits});
          }
        }
        break;
      case Collective::kBarrier:
        break;
    }
  }
  return calls;
}

// What the registry sees of `call` on a member of a group of `group_size`.
CallShape call_shape(const Call& call, const MeshCase& c, int group_size) {
  CallShape s;
  s.collective = call.collective;
  s.group_size = group_size;
  s.num_axes = static_cast<int>(c.axes.size());
  s.index_groups = !c.groups.empty();
  s.equal_groups = c.equal_groups();
  const int64_t elements = num_elements(call.shape);
  const ReduceOp op = call.kind == Kind::kMax ? ReduceOp::kMax
                      : call.kind == Kind::kMin ? ReduceOp::kMin : ReduceOp::kSum;
  s.op = op;
  s.count = elements;
  s.bytes = static_cast<size_t>(elements) * dtype_size(call.dtype);  // the input's
  return s;
}

// Runs `call` on this member with `algorithm` forced.
Array run_call(DeviceContext& ctx, const Call& call, const MeshCase& c, const Array& x,
               const std::string& algorithm) {
  const AxisNames axes = matrix::axis_names(c);
  switch (call.collective) {
    case Collective::kAllReduce:
      switch (call.kind) {
        case Kind::kSum: return psum(ctx, x, axes, c.groups, algorithm);
        case Kind::kMax: return pmax(ctx, x, axes, c.groups, algorithm);
        case Kind::kMin: return pmin(ctx, x, axes, c.groups, algorithm);
        case Kind::kMean: return pmean(ctx, x, axes, c.groups, algorithm);
      }
      break;
    case Collective::kAllGather: {
      AllGatherOptions o;
      o.axis = call.param;
      o.tiled = call.tiled;
      o.axis_index_groups = c.groups;
      o.algorithm = algorithm;
      return all_gather(ctx, x, axes, o);
    }
    case Collective::kReduceScatter: {
      PsumScatterOptions o;
      o.scatter_dimension = call.param;
      o.tiled = call.tiled;
      o.axis_index_groups = c.groups;
      o.algorithm = algorithm;
      return psum_scatter(ctx, x, axes, o);
    }
    case Collective::kAllToAll: {
      AllToAllOptions o;
      o.tiled = call.tiled;
      o.axis_index_groups = c.groups;
      o.algorithm = algorithm;
      return all_to_all(ctx, x, axes, call.param, call.param2, o);
    }
    case Collective::kBroadcast: return pbroadcast(ctx, x, axes, call.param, algorithm);
    case Collective::kBarrier: break;
  }
  throw InvalidArgumentError("matrix: no front-end for " + call.describe());
}

// Whether results of `collective` are the same on every member of a group.
bool replicated(Collective collective) {
  return collective == Collective::kAllReduce || collective == Collective::kAllGather ||
         collective == Collective::kBroadcast;
}

// Per mesh position, per call: the result, or nothing when the call raised
// AlgorithmPreconditionError.
struct RunResult {
  std::vector<std::vector<std::optional<Array>>> out;
  std::vector<std::vector<std::string>> errors;  // per position
};

class AlgorithmMatrixTest : public ::testing::TestWithParam<std::tuple<MeshCase, Collective>> {
 protected:
  void SetUp() override {
    const auto& [c, collective] = GetParam();
    mesh_case_ = c;
    collective_ = collective;
    rt_ = std::make_unique<Runtime>(c.mesh_size());
    matrix::prepare_registry(*rt_);
    groups_ = reference::groups_of(c.mesh, c.axes, c.groups);
  }

  int group_size_of(int pos) const {
    return static_cast<int>(groups_.members[groups_.group_of[pos]].size());
  }

  // One launch: every call of `calls` with `info`'s algorithm forced.
  RunResult run(const AlgorithmInfo& info, const std::vector<Call>& calls) {
    const MeshCase& c = mesh_case_;
    const int size = c.mesh_size();
    RunResult result;
    result.out.assign(size, std::vector<std::optional<Array>>(calls.size()));
    result.errors.resize(size);
    try {
      rt_->launch(Mesh::make(c.mesh), [&](DeviceContext& ctx) {
        const int pos = ctx.position();
        auto& errors = result.errors[pos];
        for (size_t k = 0; k < calls.size(); ++k) {
          const Call& call = calls[k];
          const std::string why = matrix::unmet(info, call_shape(call, c, group_size_of(pos)));
          const Array x = make_input(call, pos);
          try {
            Array y = run_call(ctx, call, c, x, info.name);
            if (!why.empty()) {
              errors.push_back(call.describe() + ": ran although its precondition fails: " + why);
            }
            const auto records = ctx.collective_records();
            if (records.empty() || records.back().algorithm != info.name ||
                records.back().collective != call.front_end()) {
              errors.push_back(call.describe() + ": collective_records() does not name " +
                               info.name + " / " + std::string(call.front_end()) +
                               (records.empty() ? " (no record)"
                                                : " (last: " + std::string(records.back().collective) +
                                                      " / " + std::string(records.back().algorithm) +
                                                      ")"));
            }
            result.out[pos][k] = std::move(y);
          } catch (const AlgorithmPreconditionError& e) {
            if (why.empty()) {
              errors.push_back(call.describe() + ": unexpected AlgorithmPreconditionError: " +
                               e.what());
            } else if (std::string(e.what()).find(info.name) == std::string::npos) {
              errors.push_back(call.describe() + ": AlgorithmPreconditionError does not name " +
                               info.name + ": " + e.what());
            }
          }
        }
      });
    } catch (const std::exception& e) {
      ADD_FAILURE() << "algorithm " << info.name << " on " << c.name << ": launch failed: "
                    << e.what();
    }
    return result;
  }

  // Compares `got` (algorithm `name`) with `want` (direct) call by call.
  void compare(const std::string& name, const std::vector<Call>& calls, const RunResult& want,
               const RunResult& got) {
    const MeshCase& c = mesh_case_;
    int reported = 0;
    auto report = [&](const std::string& what) {
      if (++reported <= 8) ADD_FAILURE() << "algorithm " << name << " on " << c.name << ": " << what;
    };
    for (int pos = 0; pos < c.mesh_size(); ++pos) {
      for (const std::string& e : got.errors[pos]) report("position " + std::to_string(pos) + ": " + e);
    }
    for (size_t k = 0; k < calls.size(); ++k) {
      const Call& call = calls[k];
      for (int pos = 0; pos < c.mesh_size(); ++pos) {
        const auto& g = got.out[pos][k];
        const auto& w = want.out[pos][k];
        if (!g.has_value() || !w.has_value()) continue;
        const std::string where = call.describe() + " at position " + std::to_string(pos);
        const bool tolerant = call.fill == Fill::kRandom &&
                              (call.kind == Kind::kSum || call.kind == Kind::kMean ||
                               call.collective == Collective::kReduceScatter);
        if (!tolerant) {
          const std::string diff = first_difference(*g, *w);
          if (!diff.empty()) report(where + ": differs from direct: " + diff);
        } else {
          const std::string diff = not_within_bound(k, call, pos, *g, *w);
          if (!diff.empty()) report(where + ": " + diff);
        }
        // Every member of the group: bitwise what its rank 0 got.
        const int first = groups_.members[groups_.group_of[pos]][0];
        if (replicated(call.collective) && got.out[first][k].has_value()) {
          const std::string diff = first_difference(*g, *got.out[first][k]);
          if (!diff.empty()) {
            report(where + ": differs from its group's rank 0 (position " + std::to_string(first) +
                   "): " + diff);
          }
        }
      }
    }
    if (reported > 8) ADD_FAILURE() << "algorithm " << name << ": " << reported - 8 << " more";
  }

  // "" when a random-float sum or mean (call k) is within the stated bound of
  // direct's.
  std::string not_within_bound(size_t k, const Call& call, int pos, const Array& got,
                               const Array& want) {
    if (got.dtype() != want.dtype() || got.shape() != want.shape()) return first_difference(got, want);
    const int group = groups_.group_of[pos];
    const int n = static_cast<int>(groups_.members[group].size());
    const std::vector<double>& magnitude = magnitudes(k, call, group);
    const reference::HostArray g = reference::to_host(got);
    const reference::HostArray w = reference::to_host(want);
    const double u = unit_roundoff(call.dtype);
    const size_t offset = call.collective == Collective::kReduceScatter
                              ? static_cast<size_t>(groups_.rank_of[pos]) * g.values.size()
                              : 0;
    for (size_t i = 0; i < g.values.size(); ++i) {
      double bound = 2.0 * n * u * magnitude[offset + i];
      if (call.kind == Kind::kMean) bound = bound / n + u * std::abs(w.values[i]);
      if (!(std::abs(g.values[i] - w.values[i]) <= bound)) {
        return "element " + std::to_string(i) + ": " + std::to_string(g.values[i]) +
               " vs direct's " + std::to_string(w.values[i]) + ", beyond the bound " +
               std::to_string(bound);
      }
    }
    return "";
  }

  // Σ_r |x_r| per input element over the members of `group`, for call k
  // (computed once, shared by every algorithm).
  const std::vector<double>& magnitudes(size_t k, const Call& call, int group) {
    std::vector<double>& sum = magnitude_cache_[{k, group}];
    if (sum.empty()) {
      sum.assign(static_cast<size_t>(num_elements(call.shape)), 0.0);
      for (int m : groups_.members[group]) {
        const reference::HostArray in = reference::to_host(make_input(call, m));
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += std::abs(in.values[i]);
      }
    }
    return sum;
  }

  // barrier under every algorithm: after round k's barrier, every member of the
  // group has announced round k (a release store before it, an acquire load
  // after). An algorithm that lets a member leave early fails this whenever the
  // early member looks before a late one has arrived.
  void check_barriers() {
    const MeshCase& c = mesh_case_;
    constexpr int kRounds = 20;
    for (const AlgorithmInfo* info : algorithm_registry(*rt_).list(Collective::kBarrier)) {
      SCOPED_TRACE("algorithm " + info->name);
      std::vector<std::atomic<int>> round(c.mesh_size());
      std::vector<std::vector<std::string>> errors(c.mesh_size());
      try {
        rt_->launch(Mesh::make(c.mesh), [&](DeviceContext& ctx) {
          const int pos = ctx.position();
          const auto& members = groups_.members[groups_.group_of[pos]];
          for (int k = 1; k <= kRounds; ++k) {
            round[pos].store(k, std::memory_order_release);
            barrier(ctx, matrix::axis_names(c), c.groups, info->name);
            for (int m : members) {
              if (round[m].load(std::memory_order_acquire) < k) {
                errors[pos].push_back("round " + std::to_string(k) + ": left before position " +
                                      std::to_string(m) + " arrived");
              }
            }
            const auto records = ctx.collective_records();
            if (records.empty() || records.back().algorithm != info->name ||
                records.back().collective != "barrier") {
              errors[pos].push_back("collective_records() does not name " + info->name);
            }
          }
        });
      } catch (const std::exception& e) {
        ADD_FAILURE() << "launch failed: " << e.what();
      }
      for (int pos = 0; pos < c.mesh_size(); ++pos) {
        if (!errors[pos].empty()) {
          ADD_FAILURE() << "position " << pos << ": " << errors[pos][0] << " (" << errors[pos].size()
                        << " in all)";
        }
      }
    }
  }

  MeshCase mesh_case_;
  Collective collective_ = Collective::kAllReduce;
  std::unique_ptr<Runtime> rt_;
  reference::Groups groups_;
  std::map<std::pair<size_t, int>, std::vector<double>> magnitude_cache_;
};

// Every registered algorithm of the collective (user-registered included)
// gives direct's results, or raises AlgorithmPreconditionError exactly where
// its preconditions fail; barriers hold every member.
TEST_P(AlgorithmMatrixTest, EveryRegisteredAlgorithm) {
  const MeshCase& c = mesh_case_;
  if (collective_ == Collective::kBarrier) return check_barriers();
  const int n = group_size_of(0);
  const std::vector<Call> calls = calls_of(collective_, c, n);
  AlgorithmRegistry& registry = algorithm_registry(*rt_);
  const AlgorithmInfo* direct = registry.find(collective_, "direct");
  ASSERT_NE(direct, nullptr);
  const RunResult want = run(*direct, calls);
  for (int pos = 0; pos < c.mesh_size(); ++pos) {
    for (const std::string& e : want.errors[pos]) ADD_FAILURE() << "direct: " << e;
  }
  const auto algorithms = registry.list(collective_);
  if (collective_ == Collective::kAllReduce) {
    const bool has_user = std::any_of(algorithms.begin(), algorithms.end(), [](const auto* a) {
      return a->name == "gather_to_root_then_broadcast";
    });
    EXPECT_TRUE(has_user) << "list() omits the user-registered algorithm";
  }
  for (const AlgorithmInfo* info : algorithms) {
    if (info->name == "direct") continue;
    SCOPED_TRACE("algorithm " + info->name);
    compare(info->name, calls, want, run(*info, calls));
  }
}

// Every collective with every mesh case it accepts: pbroadcast takes no
// axis_index_groups, and only the reductions and barrier take unequal ones.
std::vector<std::tuple<MeshCase, Collective>> with_collectives(const std::vector<MeshCase>& cases) {
  std::vector<std::tuple<MeshCase, Collective>> out;
  for (const MeshCase& c : cases) {
    for (Collective collective : kAllCollectives) {
      if (!c.groups.empty() && collective == Collective::kBroadcast) continue;
      if (!c.equal_groups() && collective != Collective::kAllReduce &&
          collective != Collective::kBarrier) {
        continue;
      }
      out.emplace_back(c, collective);
    }
  }
  return out;
}

// Group sizes 1 to 5, a tuple of axes, sub-axes of a 3-axis mesh and
// axis_index_groups: small enough for the sanitizer jobs.
std::vector<std::tuple<MeshCase, Collective>> small_cases() {
  return with_collectives({
      mesh_case({{"x", 1}}, {"x"}),
      mesh_case({{"x", 2}}, {"x"}),
      mesh_case({{"x", 3}}, {"x"}),
      mesh_case({{"x", 4}}, {"x"}),
      mesh_case({{"x", 5}}, {"x"}),
      mesh_case({{"x", 2}, {"y", 2}}, {"y", "x"}),
      mesh_case({{"x", 2}, {"y", 2}, {"z", 2}}, {"x", "z"}),
      mesh_case({{"x", 4}}, {"x"}, {{0, 2}, {3, 1}}),
  });
}

std::vector<std::tuple<MeshCase, Collective>> full_cases() {
  return with_collectives({
      mesh_case({{"x", 7}}, {"x"}),
      mesh_case({{"x", 8}}, {"x"}),
      mesh_case({{"x", 16}}, {"x"}),
      mesh_case({{"x", 64}}, {"x"}),
      mesh_case({{"x", 2}, {"y", 4}}, {"x", "y"}),
      mesh_case({{"x", 2}, {"y", 4}}, {"y", "x"}),
      mesh_case({{"x", 4}, {"y", 3}}, {"x"}),
      mesh_case({{"x", 4}, {"y", 3}}, {"y"}),
      mesh_case({{"x", 2}, {"y", 3}, {"z", 2}}, {"x", "z"}),
      mesh_case({{"x", 2}, {"y", 3}, {"z", 2}}, {"y"}),
      mesh_case({{"x", 2}, {"y", 3}, {"z", 2}}, {"z", "y"}),
      mesh_case({{"x", 2}, {"y", 3}, {"z", 2}}, {"x", "y", "z"}),
      mesh_case({{"x", 8}}, {"x"}, {{0, 2, 4, 6}, {1, 3, 5, 7}}),
      mesh_case({{"x", 2}, {"y", 4}}, {"x", "y"}, {{0, 7, 1, 6}, {2, 5, 3, 4}}),
      mesh_case({{"x", 5}}, {"x"}, {{0, 1, 2}, {3, 4}}),
  });
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<MeshCase, Collective>>& info) {
  return std::string(collective_name(std::get<1>(info.param))) + "_" + std::get<0>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(MatrixSmall, AlgorithmMatrixTest, ::testing::ValuesIn(small_cases()),
                         param_name);
INSTANTIATE_TEST_SUITE_P(MatrixFull, AlgorithmMatrixTest, ::testing::ValuesIn(full_cases()),
                         param_name);

}  // namespace
}  // namespace meshsim::algorithm_matrix_test
