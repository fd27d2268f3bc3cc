// psum / pmax / pmin against the JAX docstring examples and an independent
// sequential reference, over dtypes, axes, groups and both algorithm paths.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "meshsim/meshsim.h"
#include "meshsim/collectives/internal/reduction.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::psum_test {
namespace {

// jax.lax.psum docstring: x = arange(4); psum(x, 'i', axis_index_groups=[[0,1],[2,3]])
// gives [1, 1, 5, 5].
TEST(PsumTest, JaxDocstringGroups) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"i", 4}});
  const Array x = Array::from_values<int32_t>({4}, {0, 1, 2, 3});
  const Array out = shard_map(
      rt, mesh, [](DeviceContext& ctx, const Array& s) { return psum(ctx, s, "i", {{0, 1}, {2, 3}}); },
      P{"i"}, P{"i"}, x);
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>({4}, {1, 1, 5, 5}))) << out;
  // Without groups: every device gets 6, a replicated output.
  const Array total = shard_map(
      rt, mesh, [](DeviceContext& ctx, const Array& s) { return psum(ctx, s, "i"); }, P{"i"}, P{},
      x);
  EXPECT_TRUE(array_equal(total, Array::from_values<int32_t>({1}, {6}))) << total;
}

// psum of bool counts the true values into int32.
TEST(PsumTest, BoolSumsToInt32) {
  Runtime rt(4);
  const Array x = Array::from_values<bool>({4}, {true, false, true, true});
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [](DeviceContext& ctx, const Array& s) { return psum(ctx, s, "i"); }, P{"i"}, P{}, x);
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>({1}, {3}))) << out;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
  int64_t elements;
};

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, DType, ReduceOp>>& info) {
  const auto& [c, dtype, op] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes, c.groups);
  return name + "_" + std::to_string(c.elements) + "_" + std::string(dtype_name(dtype)) + "_" +
         reduce_op_name(op);
}

class ReductionReferenceTest
    : public ::testing::TestWithParam<std::tuple<Case, DType, ReduceOp>> {};

// Every device holds a distinct pseudo-random shard; the result on each device
// must equal a sequential reduction, in group rank order, of its group's shards.
TEST_P(ReductionReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype, op] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const int n = mesh.size();
  Runtime rt(n);
  std::mt19937 rng(1234);
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) {
    Array a = Array::empty({c.elements}, DType::kFloat64);
    for (double& v : a.mutable_span<double>()) v = static_cast<int>(rng() % 200) - 100 + 0.25 * (rng() % 4);
    inputs.push_back(a.astype(dtype));
  }
  std::vector<Array> outputs(n);
  rt.launch(mesh, [&, &c = c, op = op](DeviceContext& ctx) {
    const Array& x = inputs[ctx.position()];
    switch (op) {
      case ReduceOp::kSum: outputs[ctx.position()] = psum(ctx, x, c.axes, c.groups); break;
      case ReduceOp::kMax: outputs[ctx.position()] = pmax(ctx, x, c.axes, c.groups); break;
      case ReduceOp::kMin: outputs[ctx.position()] = pmin(ctx, x, c.axes, c.groups); break;
    }
  });
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes, c.groups, false);
  for (int p = 0; p < n; ++p) {
    const auto& members = groups.members[groups.group_of[p]];
    Array expected = Array::empty({c.elements}, reduce_output_dtype(op, dtype));
    reduce_into(op, dtype, static_cast<int>(members.size()),
                [&](int r) { return static_cast<const void*>(inputs[members[r]].bytes()); },
                expected.mutable_bytes(), c.elements);
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 2}}, {"x"}, {}, 5},
    {{{"x", 8}}, {"x"}, {}, 1},
    {{{"x", 4}, {"y", 2}}, {"y"}, {}, 3},
    {{{"x", 4}, {"y", 2}}, {"x", "y"}, {}, 7},
    {{{"x", 4}, {"y", 2}}, {"y", "x"}, {}, 7},
    {{{"x", 4}, {"y", 2}}, {"x"}, {{0, 3}, {1, 2}}, 4},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"c", "a"}, {}, 6},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"b"}, {{2}, {0, 1}}, 2},  // uneven groups
    {{{"x", 12}}, {"x"}, {}, 3},  // a counting group (> Exchange::kMaxMembers): the leader
    {{{"x", 4}, {"y", 3}}, {"y", "x"}, {}, 700},  // ... and past kLeaderBytes in 8-byte dtypes
    {{{"x", 3}}, {"x"}, {}, 50'001},   // the large, reduce-scatter path
    {{{"x", 2}, {"y", 2}}, {"y", "x"}, {}, 40'000},
    // Large, in uneven groups (of 1 and 2), past several 16 KiB chunks of a
    // slice, with a partial one at its end.
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"b"}, {{2}, {0, 1}}, 30'001},
};

INSTANTIATE_TEST_SUITE_P(
    Psum, ReductionReferenceTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(DType::kFloat32, DType::kInt32, DType::kBFloat16,
                                         DType::kFloat16, DType::kInt8, DType::kUInt32,
                                         DType::kFloat64, DType::kInt64, DType::kUInt8,
                                         DType::kBool),
                       ::testing::Values(ReduceOp::kSum)),
    case_name);
INSTANTIATE_TEST_SUITE_P(
    MaxMin, ReductionReferenceTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(DType::kFloat32, DType::kInt8, DType::kBFloat16,
                                         DType::kBool),
                       ::testing::Values(ReduceOp::kMax, ReduceOp::kMin)),
    case_name);

// The sequential reference above shares reduce_into with the implementation,
// so check that kernel against plain arithmetic too.
TEST(ReduceIntoTest, KnownAnswers) {
  const std::vector<float> a = {1.5f, -2, 3}, b = {0.25f, 8, -7}, c = {4, 1, 0};
  const float* in[] = {a.data(), b.data(), c.data()};
  std::vector<float> out(3);
  reduce_into(ReduceOp::kSum, DType::kFloat32, 3, [&](int r) { return static_cast<const void*>(in[r]); },
              out.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{5.75f, 7, -4}));
  reduce_into(ReduceOp::kMax, DType::kFloat32, 3, [&](int r) { return static_cast<const void*>(in[r]); },
              out.data(), 3);
  EXPECT_EQ(out, (std::vector<float>{4, 8, 3}));
  // int8 wraps: 100 + 100 = -56.
  const int8_t x[] = {100}, y[] = {100};
  const int8_t* xs[] = {x, y};
  int8_t sum[1];
  reduce_into(ReduceOp::kSum, DType::kInt8, 2, [&](int r) { return static_cast<const void*>(xs[r]); },
              sum, 1);
  EXPECT_EQ(sum[0], -56);
  // bfloat16 accumulates in float32: 256 + 1 + 1 = 258 (bf16 alone would stay at 256).
  const Eigen::bfloat16 p[] = {Eigen::bfloat16(256.f)}, q[] = {Eigen::bfloat16(1.f)};
  const Eigen::bfloat16* ps[] = {p, q, q};
  Eigen::bfloat16 r[1];
  reduce_into(ReduceOp::kSum, DType::kBFloat16, 3, [&](int i) { return static_cast<const void*>(ps[i]); },
              r, 1);
  EXPECT_EQ(static_cast<float>(r[0]), 258.f);
}

// A moved-from Array is a scalar zero of its dtype, so its psum is a scalar
// zero on every member (the device used to read its old element count from
// null storage).
TEST(PsumTest, OfAMovedFromArrayIsAScalarZero) {
  Runtime rt(4);
  std::vector<Array> sums(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    Array x = Array::full({3}, DType::kInt32, ctx.position() + 1);
    const Array kept = std::move(x);
    sums[ctx.position()] = psum(ctx, x, "x");  // NOLINT(bugprone-use-after-move): the point
  });
  for (const Array& sum : sums) EXPECT_TRUE(array_equal(sum, Array::scalar(int32_t{0})));
}

TEST(PsumTest, SameBitsOnEveryMemberAndEveryRun) {
  Runtime rt(8);
  const Mesh mesh = Mesh::make({{"x", 8}});
  std::vector<Array> inputs;
  std::mt19937 rng(7);
  for (int p = 0; p < 8; ++p) {
    Array a = Array::empty({30'000}, DType::kFloat32);
    for (float& v : a.mutable_span<float>()) v = std::ldexp(static_cast<float>(rng() % 1000), static_cast<int>(rng() % 40) - 20);
    inputs.push_back(a);
  }
  std::vector<Array> first(8), again(8);
  for (auto* out : {&first, &again}) {
    rt.launch(mesh, [&](DeviceContext& ctx) { (*out)[ctx.position()] = psum(ctx, inputs[ctx.position()], "x"); });
  }
  for (int p = 0; p < 8; ++p) {
    EXPECT_TRUE(array_equal(first[p], first[0])) << first_difference(first[p], first[0]);
    EXPECT_TRUE(array_equal(again[p], first[0])) << first_difference(again[p], first[0]);
  }
}

TEST(PsumTest, ThousandDevicesOnTwoCores) {
  Runtime rt(1024);
  const Mesh mesh = Mesh::make({{"x", 64}, {"y", 16}});
  std::vector<Array> outputs(1024);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const Array x = Array::full({2}, DType::kInt32, ctx.position());
    outputs[ctx.position()] = psum(ctx, psum(ctx, x, "y"), "x");
  });
  for (int p = 0; p < 1024; ++p) {
    ASSERT_EQ(outputs[p].at<int32_t>({1}), 1023 * 1024 / 2) << "position " << p;
  }
}

TEST(PsumTest, MismatchedShapesNameBothDevices) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           psum(ctx, Array::zeros({ctx.device_id() == 3 ? 2 : 1}, DType::kFloat32), "x");
                         }),
               CollectiveMismatchError, "device 0 called psum(float32(1)) but device 3 called psum(float32(2))");
}

// A barrier has no operand: a member that calls it where its peers call psum
// is told so without a made-up dtype or shape, in a leaderless group (4) and
// a counting one (16).
TEST(PsumTest, ABarrierAgainstAPsumIsNamedWithoutAnOperand) {
  for (const int n : {4, 16}) {
    Runtime rt(n);
    EXPECT_ERROR(rt.launch(Mesh::make({{"x", n}}),
                           [](DeviceContext& ctx) {
                             if (ctx.device_id() == 1) {
                               barrier(ctx, "x");
                             } else {
                               psum(ctx, Array::zeros({1}, DType::kFloat32), "x");
                             }
                           }),
                 CollectiveMismatchError,
                 "device 0 called psum(float32(1)) but device 1 called barrier()");
  }
}

// One group of the whole axis, in order, is the grouping of none (JAX):
// members spelling it either way meet. Two spellings that differ only in
// another group each make a group set of their own; the members that
// cannot meet are told so.
TEST(PsumTest, OneWholeGroupIsNoGroupsAndOtherSpellingsAreNamed) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  std::vector<int32_t> sums(4);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const AxisIndexGroups groups = ctx.position() == 0 ? AxisIndexGroups{{0, 1, 2, 3}}
                                                       : AxisIndexGroups{};
    const Array x = Array::full({1}, DType::kInt32, ctx.position() + 1);
    sums[ctx.position()] = psum(ctx, x, "x", groups).at<int32_t>({0});
  });
  EXPECT_EQ(sums, std::vector<int32_t>(4, 10));
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           const AxisIndexGroups groups =
                               ctx.position() == 1 ? AxisIndexGroups{{0, 1}, {3, 2}}
                                                   : AxisIndexGroups{{0, 1}, {2, 3}};
                           psum(ctx, Array::zeros({1}, DType::kInt32), "x", groups);
                         }),
               CollectiveMismatchError,
               "(the same devices, grouped by different axis_index_groups that order them alike: "
               "pass the same groups on every member).");
}

TEST(PsumTest, InvalidAxisAndGroupsAreErrorsOnTheDevice) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(rt.launch(mesh, [](DeviceContext& ctx) { psum(ctx, Array::zeros({1}, DType::kFloat32), "z"); }),
               AxisError, "'z'");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           psum(ctx, Array::zeros({1}, DType::kFloat32), "x", {{0, 1}, {1, 2, 3}});
                         }),
               GroupError, "1");
}

}  // namespace
}  // namespace meshsim::psum_test

namespace meshsim::psum_test {
namespace {

TEST(ReduceIntoTest, MaxAndMinPropagateNanFromAnyRank) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int nan_rank = 0; nan_rank < 3; ++nan_rank) {
    float in[3][2] = {{1, 5}, {2, 6}, {3, 7}};
    in[nan_rank][0] = nan;
    float out[2];
    for (ReduceOp op : {ReduceOp::kMax, ReduceOp::kMin}) {
      reduce_into(op, DType::kFloat32, 3, [&](int r) { return static_cast<const void*>(in[r]); },
                  out, 2);
      EXPECT_TRUE(std::isnan(out[0])) << reduce_op_name(op) << " NaN at rank " << nan_rank;
      EXPECT_EQ(out[1], op == ReduceOp::kMax ? 7.f : 5.f);
    }
  }
}

// reduce_into takes a shortcut for a few elements from a few inputs (a small
// psum in a small group): it must give the bits of the blocked kernel, which
// handles 17 elements, in every dtype and op, with NaNs, wrapping integers,
// bools and 16-bit floats in the data.
TEST(ReduceIntoTest, FewElementsMatchTheBlockedKernel) {
  constexpr int64_t kFew = 16;
  std::mt19937 rng(99);
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16,
                      DType::kInt8, DType::kUInt8, DType::kInt32, DType::kUInt32, DType::kInt64,
                      DType::kBool}) {
    for (int n : {1, 2, 5, 8}) {
      std::vector<Array> inputs;
      for (int r = 0; r < n; ++r) {
        Array a = Array::empty({kFew + 1}, DType::kFloat64);
        for (double& v : a.mutable_span<double>()) {
          v = rng() % 7 == 0 ? std::numeric_limits<double>::quiet_NaN()
                             : static_cast<double>(static_cast<int>(rng() % 400) - 200) + 0.375;
        }
        inputs.push_back(a.astype(dtype));
      }
      const auto input = [&](int r) { return static_cast<const void*>(inputs[r].bytes()); };
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
        const DType out_dtype = reduce_output_dtype(op, dtype);
        Array blocked = Array::empty({kFew + 1}, out_dtype);
        Array few = Array::empty({kFew}, out_dtype);
        reduce_into(op, dtype, n, input, blocked.mutable_bytes(), kFew + 1);
        reduce_into(op, dtype, n, input, few.mutable_bytes(), kFew);
        EXPECT_EQ(std::memcmp(few.bytes(), blocked.bytes(), few.nbytes()), 0)
            << dtype_name(dtype) << " " << reduce_op_name(op) << " over " << n << " inputs";
      }
    }
  }
}

}  // namespace
}  // namespace meshsim::psum_test
