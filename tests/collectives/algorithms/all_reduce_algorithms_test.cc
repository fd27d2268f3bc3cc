// The built-in all-reduce algorithms (ring, bidirectional_ring,
// recursive_doubling, rabenseifner, binomial_tree, double_binary_tree,
// hierarchical), each forced through psum / pmax / pmin and checked against an
// independent sequential reference on integer data (bitwise), over group
// sizes, counts around the group size and many segments; that the call record
// names the algorithm; and that every member gets the same bits on floats,
// NaN and signed zeros included.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/reference_collectives.h"

namespace meshsim::all_reduce_algorithms_test {
namespace {

const ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin};

Array reduce_with(DeviceContext& ctx, ReduceOp op, const Array& x, const AxisNames& axes,
                  std::string_view algorithm) {
  switch (op) {
    case ReduceOp::kSum: return psum(ctx, x, axes, {}, algorithm);
    case ReduceOp::kMax: return pmax(ctx, x, axes, {}, algorithm);
    case ReduceOp::kMin: return pmin(ctx, x, axes, {}, algorithm);
  }
  return {};
}

// Distinct small values per position and element, negatives included; sums
// of up to 64 of them stay far from int32 overflow.
Array integer_input(int position, int64_t count) {
  Array a = Array::empty({count}, DType::kInt32);
  auto values = a.mutable_span<int32_t>();
  for (int64_t i = 0; i < count; ++i) {
    values[i] = static_cast<int32_t>((position * 7919 + i * 104729 + position * i) % 2001) - 1000;
  }
  return a;
}

// The reduction of `inputs` over each position's group, element by element.
std::vector<std::vector<int64_t>> reference_results(
    const std::vector<std::pair<std::string, int>>& mesh_axes,
    const std::vector<std::string>& axes, const std::vector<Array>& inputs, ReduceOp op) {
  const reference::Groups groups = reference::groups_of(mesh_axes, axes, {});
  std::vector<std::vector<int64_t>> out(inputs.size());
  for (size_t p = 0; p < inputs.size(); ++p) {
    const auto& members = groups.members[groups.group_of[p]];
    for (int64_t i = 0; i < inputs[p].size(); ++i) {
      int64_t acc = inputs[members[0]].span<int32_t>()[i];
      for (size_t r = 1; r < members.size(); ++r) {
        const int64_t v = inputs[members[r]].span<int32_t>()[i];
        acc = op == ReduceOp::kSum ? acc + v : op == ReduceOp::kMax ? std::max(acc, v)
                                                                    : std::min(acc, v);
      }
      out[p].push_back(acc);
    }
  }
  return out;
}

std::vector<int64_t> values_of(const Array& a) {
  std::vector<int64_t> v;
  for (int32_t x : a.span<int32_t>()) v.push_back(x);
  return v;
}

// Runs `algorithm` over `axes` of `mesh_axes` for every count and op, and
// checks each result against the reference and each call's record.
void check_against_reference(const std::string& algorithm,
                             const std::vector<std::pair<std::string, int>>& mesh_axes,
                             const std::vector<std::string>& axes,
                             const std::vector<int64_t>& counts) {
  const Mesh mesh = Mesh::make(mesh_axes);
  const int n = mesh.size();
  Runtime rt(n);
  // Small segments, so the largest count spans many of them.
  algorithm_registry(rt).set_tunable(Collective::kAllReduce, algorithm, "segment_bytes", 16);
  for (int64_t count : counts) {
    std::vector<Array> inputs;
    for (int p = 0; p < n; ++p) inputs.push_back(integer_input(p, count));
    for (ReduceOp op : kOps) {
      std::vector<Array> outputs(n);
      std::vector<std::string> ran(n);
      rt.launch(mesh, [&](DeviceContext& ctx) {
        const int p = ctx.position();
        outputs[p] = reduce_with(ctx, op, inputs[p], axes, algorithm);
        const auto records = ctx.collective_records();
        ran[p] = records.empty() ? "(no record)" : std::string(records.back().algorithm);
      });
      const auto expected = reference_results(mesh_axes, axes, inputs, op);
      for (int p = 0; p < n; ++p) {
        SCOPED_TRACE(algorithm + ", count " + std::to_string(count) + ", " +
                     reduce_op_name(op) + ", position " + std::to_string(p));
        ASSERT_EQ(outputs[p].dtype(), DType::kInt32);
        ASSERT_EQ(values_of(outputs[p]), expected[p]);
        EXPECT_EQ(ran[p], algorithm);
      }
    }
  }
}

class AllReduceAlgorithmTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(AllReduceAlgorithmTest, MatchesReferenceOnIntegers) {
  const auto& [algorithm, n] = GetParam();
  check_against_reference(algorithm, {{"x", n}}, {"x"}, {0, 1, 3, n + 1, 2 * n + 3, 301});
}

std::string flat_name(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param));
}

const std::string kFlatAlgorithms[] = {"ring",         "bidirectional_ring", "recursive_doubling",
                                       "rabenseifner", "binomial_tree",      "double_binary_tree"};

INSTANTIATE_TEST_SUITE_P(Flat, AllReduceAlgorithmTest,
                         ::testing::Combine(::testing::ValuesIn(kFlatAlgorithms),
                                            ::testing::Values(1, 2, 3, 5, 8)),
                         flat_name);
// A large group: 64 members (run under the sanitizers too).
INSTANTIATE_TEST_SUITE_P(Large, AllReduceAlgorithmTest,
                         ::testing::Combine(::testing::ValuesIn(kFlatAlgorithms),
                                            ::testing::Values(64)),
                         flat_name);

struct HierarchicalCase {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
};

void PrintTo(const HierarchicalCase& c, std::ostream* os) {
  for (const auto& [axis, size] : c.mesh) *os << axis << size;
  *os << " over";
  for (const auto& a : c.axes) *os << " " << a;
}

class HierarchicalAllReduceTest : public ::testing::TestWithParam<HierarchicalCase> {};

TEST_P(HierarchicalAllReduceTest, MatchesReferenceOnIntegers) {
  const HierarchicalCase& c = GetParam();
  check_against_reference("hierarchical", c.mesh, c.axes, {0, 1, 3, 9, 301});
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, HierarchicalAllReduceTest,
    ::testing::Values(HierarchicalCase{{{"x", 2}, {"y", 4}}, {"x", "y"}},
                      HierarchicalCase{{{"x", 4}, {"y", 2}}, {"y", "x"}},
                      HierarchicalCase{{{"a", 2}, {"b", 3}, {"c", 2}}, {"a", "b", "c"}},
                      HierarchicalCase{{{"a", 2}, {"b", 3}, {"c", 2}}, {"c", "a"}},
                      HierarchicalCase{{{"a", 1}, {"b", 5}}, {"a", "b"}}),
    [](const auto& info) {
      std::string name;
      for (const auto& [axis, size] : info.param.mesh) name += axis + std::to_string(size);
      name += "_over";
      for (const auto& a : info.param.axes) name += "_" + a;
      return name;
    });

// Hierarchical composes over mesh axes: one axis is a precondition failure
// naming it.
TEST(HierarchicalAllReduceTest, OneAxisIsAPreconditionError) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           psum(ctx, integer_input(ctx.position(), 5), "x", {}, "hierarchical");
                         }),
               AlgorithmPreconditionError, "hierarchical");
}

// Float data with NaNs of different payloads and zeros of both signs: for
// every algorithm and op, all members of the group get the same bits, and a
// second run gives them again.
TEST(AllReduceAlgorithmDeterminismTest, MembersAgreeBitwiseOnFloats) {
  const int n = 6;
  const int64_t count = 257;
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 3}});
  Runtime rt(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) {
    Array a = Array::empty({count}, DType::kFloat32);
    auto v = a.mutable_span<float>();
    for (int64_t i = 0; i < count; ++i) {
      switch (i % 8) {
        case 0: v[i] = std::bit_cast<float>(0x7fc00000u + static_cast<uint32_t>(p)); break;
        case 1: v[i] = p % 2 == 0 ? 0.0f : -0.0f; break;
        default: v[i] = uniform(rng) * std::pow(10.0f, static_cast<float>(i % 5));
      }
    }
    inputs.push_back(a);
  }
  for (const char* algorithm : {"ring", "bidirectional_ring", "recursive_doubling", "rabenseifner",
                                "binomial_tree", "double_binary_tree", "hierarchical"}) {
    algorithm_registry(rt).set_tunable(Collective::kAllReduce, algorithm, "segment_bytes", 64);
    for (ReduceOp op : kOps) {
      std::vector<Array> first(n), second(n);
      for (auto* outputs : {&first, &second}) {
        rt.launch(mesh, [&](DeviceContext& ctx) {
          const int p = ctx.position();
          (*outputs)[p] = reduce_with(ctx, op, inputs[p], {"x", "y"}, algorithm);
        });
      }
      for (int p = 0; p < n; ++p) {
        SCOPED_TRACE(std::string(algorithm) + ", " + reduce_op_name(op) + ", position " +
                     std::to_string(p));
        ASSERT_EQ(first[p].nbytes(), first[0].nbytes());
        EXPECT_EQ(std::memcmp(first[p].bytes(), first[0].bytes(), first[0].nbytes()), 0);
        EXPECT_EQ(std::memcmp(second[p].bytes(), first[0].bytes(), first[0].nbytes()), 0);
      }
    }
  }
}

// Every dtype, on integer-valued data every dtype holds exactly: each
// algorithm's result equals direct's bitwise (int8 and uint8 sums wrap alike).
TEST(AllReduceAlgorithmDTypeTest, EveryDTypeMatchesDirect) {
  const int n = 5;
  const int64_t count = 11;
  const Mesh mesh = Mesh::make({{"x", n}});
  Runtime rt(n);
  for (DType dtype : kAllDTypes) {
    std::vector<Array> inputs;
    for (int p = 0; p < n; ++p) {
      Array a = Array::empty({count}, DType::kFloat64);
      auto v = a.mutable_span<double>();
      for (int64_t i = 0; i < count; ++i) v[i] = static_cast<double>((p * 37 + i * 11) % 100);
      inputs.push_back(a.astype(dtype));
    }
    for (const char* algorithm : {"ring", "bidirectional_ring", "recursive_doubling",
                                  "rabenseifner", "binomial_tree", "double_binary_tree"}) {
      for (ReduceOp op : kOps) {
        std::vector<Array> expected(n), actual(n);
        rt.launch(mesh, [&](DeviceContext& ctx) {
          const int p = ctx.position();
          expected[p] = reduce_with(ctx, op, inputs[p], "x", "direct");
          actual[p] = reduce_with(ctx, op, inputs[p], "x", algorithm);
        });
        for (int p = 0; p < n; ++p) {
          SCOPED_TRACE(std::string(algorithm) + ", " + std::string(dtype_name(dtype)) + ", " +
                       reduce_op_name(op) + ", position " + std::to_string(p));
          ASSERT_EQ(actual[p].dtype(), expected[p].dtype());
          EXPECT_EQ(std::memcmp(actual[p].bytes(), expected[p].bytes(), expected[p].nbytes()), 0);
        }
      }
    }
  }
}

// Direct's modeled cost follows its schedule (collectives/internal/all_reduce.h):
// one meeting while the whole exchange fits the leader (n·S <= 64 KiB), else
// the meeting and the departure; each member moves its slice of every input
// in and its slice out to every peer, and reduces (n-1)/n·S.
TEST(DirectAllReduceCostTest, CountsTheMeetingsAndBytesOfItsSchedule) {
  Runtime rt(1);
  const AlgorithmInfo* direct = algorithm_registry(rt).find(Collective::kAllReduce, "direct");
  ASSERT_NE(direct, nullptr);
  CallShape shape;
  shape.collective = Collective::kAllReduce;
  shape.group_size = 4;
  shape.bytes = 16 * 1024;  // n·S = 64 KiB: the leader's
  const CostTerms small = direct->cost(shape);
  EXPECT_EQ(small.latency, 1);
  shape.bytes = 1 << 20;
  const CostTerms large = direct->cost(shape);
  EXPECT_EQ(large.latency, 2);
  EXPECT_DOUBLE_EQ(large.bytes, 7.0 / 4 * (1 << 20));
  EXPECT_DOUBLE_EQ(large.reduced_bytes, 3.0 / 4 * (1 << 20));
}

}  // namespace
}  // namespace meshsim::all_reduce_algorithms_test
