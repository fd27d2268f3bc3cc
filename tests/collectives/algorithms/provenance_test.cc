// Provenance: inputs whose results say who contributed, run under every
// registered algorithm (user-registered included) and checked against known
// answers, not against direct. A missing or doubled contribution, or a block
// from the wrong member or position, shows in the result:
// - sum (psum, psum_scatter), int64: rank r contributes the base-4 digit
//   4^(r - 24w) at the elements i with i % 3 == w when r is in window w
//   (ranks 24w .. 24w+23), so each element counts the contributions of its
//   window, one digit per rank: 1 when it arrived once, 0 when missing, 2
//   when doubled. Rank 0 also adds the tag (i + 1) << 48, which a result from
//   the wrong position cannot carry.
// - max / min (pmax, pmin), int32 and float32: rank r holds
//   (r + i) % n + 128·(i % 4096) at element i: a permutation, so exactly one
//   rank holds the extreme of each element, every rank holds it somewhere.
// - all_gather, all_to_all, pbroadcast, int64: each element names its source
//   mesh position, its destination (all_to_all) and its index.
// Test names: ProvenanceSmall/... (the sanitizer subset), ProvenanceFull/...

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/algorithms/matrix_support.h"
#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"
#include "support/reference_collectives.h"

namespace meshsim::provenance_test {
namespace {

using matrix::mesh_case;
using matrix::MeshCase;

constexpr int kWindow = 24;  // ranks per base-4 window: 48 bits, below the tag

uint64_t sum_contribution(int rank, int64_t i) {
  const int digit = rank - kWindow * static_cast<int>(i % 3);
  uint64_t v = (digit >= 0 && digit < kWindow) ? uint64_t{1} << (2 * digit) : 0;
  if (rank == 0) v += static_cast<uint64_t>(i + 1) << 48;
  return v;
}

uint64_t expected_sum(int n, int64_t i) {
  uint64_t v = 0;
  for (int r = 0; r < n; ++r) v += sum_contribution(r, i);
  return v;
}

// What a wrong sum says: the ranks whose digit is not 1, and a wrong tag.
std::string explain_sum(uint64_t got, int n, int64_t i) {
  std::string s;
  const int window = static_cast<int>(i % 3);
  for (int r = kWindow * window; r < std::min(n, kWindow * (window + 1)); ++r) {
    const uint64_t digit = (got >> (2 * (r - kWindow * window))) & 3;
    if (digit != 1) s += " rank " + std::to_string(r) + " counted " + std::to_string(digit) + "x;";
  }
  if ((got >> 48) != static_cast<uint64_t>(i + 1)) {
    s += " tag " + std::to_string(got >> 48) + " (element " + std::to_string(i) + " has " +
         std::to_string(i + 1) + ")";
  }
  return s;
}

double extreme_input(int rank, int n, int64_t i) {
  return static_cast<double>((rank + i) % n + 128 * (i % 4096));
}

class AlgorithmProvenanceTest : public ::testing::TestWithParam<MeshCase> {
 protected:
  void SetUp() override {
    rt_ = std::make_unique<Runtime>(GetParam().mesh_size());
    matrix::prepare_registry(*rt_);
    groups_ = reference::groups_of(GetParam().mesh, GetParam().axes, GetParam().groups);
  }
  const std::vector<int>& members_of(int pos) const {
    return groups_.members[groups_.group_of[pos]];
  }
  int rank_of(int pos) const { return groups_.rank_of[pos]; }

  // Runs body(ctx, algorithm) on the mesh once per algorithm of `collective`;
  // body returns its errors. A call whose preconditions fail raises
  // AlgorithmPreconditionError, which body lets through; `call_shape` says
  // whether it should have.
  template <class Body>
  void for_each_algorithm(Collective collective, Body body) {
    const MeshCase& c = GetParam();
    if (!c.equal_groups() && collective != Collective::kAllReduce) GTEST_SKIP();
    for (const AlgorithmInfo* info : algorithm_registry(*rt_).list(collective)) {
      std::vector<std::vector<std::string>> errors(c.mesh_size());
      try {
        rt_->launch(Mesh::make(c.mesh), [&](DeviceContext& ctx) {
          body(ctx, *info, errors[ctx.position()]);
        });
      } catch (const std::exception& e) {
        ADD_FAILURE() << info->name << " on " << c.name << ": launch failed: " << e.what();
      }
      for (int pos = 0; pos < c.mesh_size(); ++pos) {
        for (size_t k = 0; k < std::min<size_t>(errors[pos].size(), 3); ++k) {
          ADD_FAILURE() << info->name << " on " << c.name << ", position " << pos << ": "
                        << errors[pos][k];
        }
      }
    }
  }

  // Runs `call` unless `info`'s preconditions fail for `shape`; then it must
  // raise AlgorithmPreconditionError. Returns whether it ran.
  template <class Call>
  bool run_if_applicable(const AlgorithmInfo& info, CallShape shape, std::vector<std::string>& errors,
                         Call call) {
    const MeshCase& c = GetParam();
    shape.num_axes = static_cast<int>(c.axes.size());
    shape.index_groups = !c.groups.empty();
    shape.equal_groups = c.equal_groups();
    const std::string why = matrix::unmet(info, shape);
    try {
      call();
    } catch (const AlgorithmPreconditionError& e) {
      if (why.empty()) errors.push_back(std::string("unexpected ") + e.what());
      return false;
    }
    if (!why.empty()) errors.push_back("ran although " + why);
    return why.empty();
  }

  std::unique_ptr<Runtime> rt_;
  reference::Groups groups_;
};

TEST_P(AlgorithmProvenanceTest, PsumCountsEveryContributionOnce) {
  const MeshCase& c = GetParam();
  for_each_algorithm(Collective::kAllReduce, [&](DeviceContext& ctx, const AlgorithmInfo& info,
                                                 std::vector<std::string>& errors) {
    const int pos = ctx.position();
    const int n = static_cast<int>(members_of(pos).size());
    for (int64_t count : {int64_t{1}, int64_t{n + 1}, int64_t{700}}) {
      Array x = Array::empty({count}, DType::kInt64);
      auto in = x.mutable_span<int64_t>();
      for (int64_t i = 0; i < count; ++i) in[i] = static_cast<int64_t>(sum_contribution(rank_of(pos), i));
      Array y;
      const CallShape shape{.collective = Collective::kAllReduce, .group_size = n,
                            .bytes = static_cast<size_t>(count) * 8, .count = count};
      if (!run_if_applicable(info, shape, errors,
                             [&] { y = psum(ctx, x, matrix::axis_names(c), c.groups, info.name); })) {
        continue;
      }
      const auto out = y.span<int64_t>();
      for (int64_t i = 0; i < count; ++i) {
        const auto got = static_cast<uint64_t>(out[i]);
        if (got != expected_sum(n, i)) {
          errors.push_back("psum of " + std::to_string(count) + ", element " + std::to_string(i) +
                           ":" + explain_sum(got, n, i));
          break;
        }
      }
    }
  });
}

TEST_P(AlgorithmProvenanceTest, PmaxPminFindTheOneHolder) {
  const MeshCase& c = GetParam();
  for_each_algorithm(Collective::kAllReduce, [&](DeviceContext& ctx, const AlgorithmInfo& info,
                                                 std::vector<std::string>& errors) {
    const int pos = ctx.position();
    const int n = static_cast<int>(members_of(pos).size());
    for (DType dtype : {DType::kInt32, DType::kFloat32}) {
      for (bool max : {true, false}) {
        const int64_t count = 600;
        Array x = Array::empty({count}, DType::kFloat64);
        auto in = x.mutable_span<double>();
        for (int64_t i = 0; i < count; ++i) in[i] = extreme_input(rank_of(pos), n, i);
        x = x.astype(dtype);
        Array y;
        const CallShape shape{.collective = Collective::kAllReduce, .group_size = n,
                              .bytes = static_cast<size_t>(count) * 4, .count = count,
                              .op = max ? ReduceOp::kMax : ReduceOp::kMin};
        if (!run_if_applicable(info, shape, errors, [&] {
              y = max ? pmax(ctx, x, matrix::axis_names(c), c.groups, info.name)
                      : pmin(ctx, x, matrix::axis_names(c), c.groups, info.name);
            })) {
          continue;
        }
        const Array y64 = y.astype(DType::kFloat64);
        const auto out = y64.span<double>();
        for (int64_t i = 0; i < count; ++i) {
          const double want = static_cast<double>(128 * (i % 4096) + (max ? n - 1 : 0));
          if (out[i] != want) {
            const int64_t holder = ((max ? n - 1 : 0) - i % n + n) % n;
            errors.push_back(std::string(max ? "pmax " : "pmin ") +
                             std::string(dtype_name(dtype)) + ", element " + std::to_string(i) +
                             ": " + std::to_string(out[i]) + " instead of " + std::to_string(want) +
                             " held by rank " + std::to_string(holder));
            break;
          }
        }
      }
    }
  });
}

TEST_P(AlgorithmProvenanceTest, PsumScatterCountsEveryContributionOnce) {
  const MeshCase& c = GetParam();
  for_each_algorithm(Collective::kReduceScatter, [&](DeviceContext& ctx, const AlgorithmInfo& info,
                                                     std::vector<std::string>& errors) {
    const int pos = ctx.position();
    const int n = static_cast<int>(members_of(pos).size());
    const int rank = rank_of(pos);
    for (int64_t block : {int64_t{1}, int64_t{3}, int64_t{90}}) {
      const int64_t count = n * block;
      Array x = Array::empty({count}, DType::kInt64);
      auto in = x.mutable_span<int64_t>();
      for (int64_t i = 0; i < count; ++i) in[i] = static_cast<int64_t>(sum_contribution(rank, i));
      Array y;
      const CallShape shape{.collective = Collective::kReduceScatter, .group_size = n,
                            .bytes = static_cast<size_t>(count) * 8, .count = count};
      PsumScatterOptions o;
      o.tiled = true;
      o.axis_index_groups = c.groups;
      o.algorithm = info.name;
      if (!run_if_applicable(info, shape, errors,
                             [&] { y = psum_scatter(ctx, x, matrix::axis_names(c), o); })) {
        continue;
      }
      const auto out = y.span<int64_t>();
      for (int64_t j = 0; j < block; ++j) {
        const int64_t i = rank * block + j;
        const auto got = static_cast<uint64_t>(out[j]);
        if (got != expected_sum(n, i)) {
          errors.push_back("psum_scatter of " + std::to_string(count) + ", rank " +
                           std::to_string(rank) + " element " + std::to_string(j) + ":" +
                           explain_sum(got, n, i));
          break;
        }
      }
    }
  });
}

std::string describe_tag(uint64_t v) {
  return "(source " + std::to_string(v >> 40) + ", destination " +
         std::to_string((v >> 20) & 0xfffff) + ", index " + std::to_string(v & 0xfffff) + ")";
}

TEST_P(AlgorithmProvenanceTest, AllGatherBlocksComeFromTheirSource) {
  const MeshCase& c = GetParam();
  for_each_algorithm(Collective::kAllGather, [&](DeviceContext& ctx, const AlgorithmInfo& info,
                                                 std::vector<std::string>& errors) {
    const int pos = ctx.position();
    const auto& members = members_of(pos);
    const int n = static_cast<int>(members.size());
    for (int64_t block : {int64_t{1}, int64_t{n + 1}, int64_t{100}}) {
      Array x = Array::empty({block}, DType::kInt64);
      auto in = x.mutable_span<int64_t>();
      for (int64_t j = 0; j < block; ++j) in[j] = (int64_t{pos} << 40) | j;
      Array y;
      const CallShape shape{.collective = Collective::kAllGather, .group_size = n,
                            .bytes = static_cast<size_t>(block) * 8, .count = block};
      AllGatherOptions o;
      o.tiled = true;
      o.axis_index_groups = c.groups;
      o.algorithm = info.name;
      if (!run_if_applicable(info, shape, errors,
                             [&] { y = all_gather(ctx, x, matrix::axis_names(c), o); })) {
        continue;
      }
      const auto out = y.span<int64_t>();
      for (int r = 0; r < n; ++r) {
        for (int64_t j = 0; j < block; ++j) {
          const auto want = (static_cast<uint64_t>(members[r]) << 40) | j;
          const auto got = static_cast<uint64_t>(out[r * block + j]);
          if (got != want) {
            errors.push_back("all_gather of " + std::to_string(block) + ": block " +
                             std::to_string(r) + " element " + std::to_string(j) + " holds " +
                             describe_tag(got) + ", not " + describe_tag(want));
            r = n;
            break;
          }
        }
      }
    }
  });
}

TEST_P(AlgorithmProvenanceTest, AllToAllBlocksComeFromTheirSource) {
  const MeshCase& c = GetParam();
  for_each_algorithm(Collective::kAllToAll, [&](DeviceContext& ctx, const AlgorithmInfo& info,
                                                std::vector<std::string>& errors) {
    const int pos = ctx.position();
    const auto& members = members_of(pos);
    const int n = static_cast<int>(members.size());
    const int rank = rank_of(pos);
    for (int64_t block : {int64_t{1}, int64_t{3}, int64_t{70}}) {
      Array x = Array::empty({n * block}, DType::kInt64);
      auto in = x.mutable_span<int64_t>();
      for (int d = 0; d < n; ++d) {
        for (int64_t j = 0; j < block; ++j) {
          in[d * block + j] = (int64_t{pos} << 40) | (int64_t{d} << 20) | j;
        }
      }
      Array y;
      const CallShape shape{.collective = Collective::kAllToAll, .group_size = n,
                            .bytes = static_cast<size_t>(n * block) * 8, .count = n * block};
      AllToAllOptions o;
      o.tiled = true;
      o.axis_index_groups = c.groups;
      o.algorithm = info.name;
      if (!run_if_applicable(info, shape, errors,
                             [&] { y = all_to_all(ctx, x, matrix::axis_names(c), 0, 0, o); })) {
        continue;
      }
      const auto out = y.span<int64_t>();
      for (int s = 0; s < n; ++s) {
        for (int64_t j = 0; j < block; ++j) {
          const uint64_t want =
              (static_cast<uint64_t>(members[s]) << 40) | (uint64_t(rank) << 20) | j;
          const auto got = static_cast<uint64_t>(out[s * block + j]);
          if (got != want) {
            errors.push_back("all_to_all of " + std::to_string(block) + ": block " +
                             std::to_string(s) + " element " + std::to_string(j) + " holds " +
                             describe_tag(got) + ", not " + describe_tag(want));
            s = n;
            break;
          }
        }
      }
    }
  });
}

TEST_P(AlgorithmProvenanceTest, PbroadcastComesFromTheSource) {
  const MeshCase& c = GetParam();
  if (!c.groups.empty()) GTEST_SKIP() << "pbroadcast takes no axis_index_groups";
  for_each_algorithm(Collective::kBroadcast, [&](DeviceContext& ctx, const AlgorithmInfo& info,
                                                 std::vector<std::string>& errors) {
    const int pos = ctx.position();
    const auto& members = members_of(pos);
    const int n = static_cast<int>(members.size());
    for (int source : {0, n - 1, n / 2}) {
      const int64_t count = 300;
      Array x = Array::empty({count}, DType::kInt64);
      auto in = x.mutable_span<int64_t>();
      for (int64_t j = 0; j < count; ++j) in[j] = (int64_t{pos} << 40) | j;
      Array y;
      const CallShape shape{.collective = Collective::kBroadcast, .group_size = n,
                            .bytes = static_cast<size_t>(count) * 8, .count = count};
      if (!run_if_applicable(info, shape, errors, [&] {
            y = pbroadcast(ctx, x, matrix::axis_names(c), source, info.name);
          })) {
        continue;
      }
      const auto out = y.span<int64_t>();
      for (int64_t j = 0; j < count; ++j) {
        const uint64_t want = (static_cast<uint64_t>(members[source]) << 40) | j;
        if (static_cast<uint64_t>(out[j]) != want) {
          errors.push_back("pbroadcast from " + std::to_string(source) + ": element " +
                           std::to_string(j) + " holds " + describe_tag(out[j]) + ", not " +
                           describe_tag(want));
          break;
        }
      }
    }
  });
}

std::string case_name(const ::testing::TestParamInfo<MeshCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(ProvenanceSmall, AlgorithmProvenanceTest,
                         ::testing::Values(mesh_case({{"x", 2}}, {"x"}), mesh_case({{"x", 3}}, {"x"}),
                                           mesh_case({{"x", 5}}, {"x"}),
                                           mesh_case({{"x", 2}, {"y", 2}, {"z", 2}}, {"z", "x"})),
                         case_name);
INSTANTIATE_TEST_SUITE_P(ProvenanceFull, AlgorithmProvenanceTest,
                         ::testing::Values(mesh_case({{"x", 8}}, {"x"}), mesh_case({{"x", 64}}, {"x"}),
                                           mesh_case({{"x", 4}, {"y", 3}}, {"y"}),
                                           mesh_case({{"x", 8}}, {"x"}, {{0, 2, 4, 6}, {1, 3, 5, 7}}),
                                           mesh_case({{"x", 5}}, {"x"}, {{0, 1, 2}, {3, 4}})),
                         case_name);

}  // namespace
}  // namespace meshsim::provenance_test
