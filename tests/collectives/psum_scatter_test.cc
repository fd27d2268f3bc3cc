// psum_scatter against the JAX docstring examples and an independent
// sequential reference, over meshes of 1-3 axes, tuple axes, groups, every
// dtype, stacked and tiled, negative dimensions and both algorithm paths;
// plus the accumulation rule and the errors.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::psum_scatter_test {
namespace {

// The pmap of the docstring: device i holds row i of arange(16).reshape(4, 4).
std::vector<Array> docstring_pmap(Runtime& rt, const PsumScatterOptions& options) {
  return pmap(
      rt,
      [&](DeviceContext& ctx, std::span<const Array> x) {
        return std::vector{psum_scatter(ctx, x[0], "i", options)};
      },
      "i", std::vector{Array::iota({4, 4}, DType::kInt32)});
}

// jax.lax.psum_scatter docstring: stacked gives [24 28 32 36], tiled
// [[24] [28] [32] [36]], and tiled over groups [[0, 2], [3, 1]]
// [[8 10] [20 22] [12 14] [16 18]].
TEST(PsumScatterTest, JaxDocstringExamples) {
  Runtime rt(4);
  const Array stacked = docstring_pmap(rt, {})[0];
  EXPECT_TRUE(array_equal(stacked, Array::from_values<int32_t>({4}, {24, 28, 32, 36}))) << stacked;
  const Array tiled = docstring_pmap(rt, {.tiled = true})[0];
  EXPECT_TRUE(array_equal(tiled, Array::from_values<int32_t>({4, 1}, {24, 28, 32, 36}))) << tiled;
  const Array grouped = docstring_pmap(rt, {.tiled = true, .axis_index_groups = {{0, 2}, {3, 1}}})[0];
  EXPECT_TRUE(array_equal(grouped, Array::from_values<int32_t>({4, 2}, {8, 10, 20, 22, 12, 14, 16, 18})))
      << grouped;
}

// Like psum, bfloat16 accumulates in float32: 256 + 1 + 1 = 258, where
// bfloat16 arithmetic would stay at 256. bool counts into int32.
TEST(PsumScatterTest, AccumulationFollowsPsum) {
  Runtime rt(3);
  const Mesh mesh = Mesh::make({{"x", 3}});
  const Array x = Array::from_values<float>({3, 3}, {256, 256, 256, 1, 1, 1, 1, 1, 1}).astype(DType::kBFloat16);
  const Array sums = shard_map(
      rt, mesh, [](DeviceContext& ctx, const Array& s) {
        return psum_scatter(ctx, s, "x", {.scatter_dimension = 1, .tiled = true});
      },
      P{"x"}, P{{}, "x"}, x);
  EXPECT_TRUE(array_equal(sums, Array::full({1, 3}, DType::kBFloat16, 258))) << sums;
  const Array b = Array::from_values<bool>({3, 3}, {true, true, false, true, false, false, true, true, true});
  const Array counts = shard_map(
      rt, mesh, [](DeviceContext& ctx, const Array& s) { return psum_scatter(ctx, s, "x", {.scatter_dimension = 1}); },
      P{"x"}, P{"x"}, b);
  EXPECT_TRUE(array_equal(counts, Array::from_values<int32_t>({3}, {3, 2, 1}))) << counts;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
  int scatter_dimension;
  Shape shape;  // of every device's x, with the group size at scatter_dimension
};

using Param = std::tuple<Case, DType, bool>;

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [c, dtype, tiled] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes, c.groups);
  for (int64_t d : c.shape) name += "_" + std::to_string(d);
  name += "_dim" + (c.scatter_dimension < 0 ? "m" + std::to_string(-c.scatter_dimension)
                                            : std::to_string(c.scatter_dimension));
  return name + "_" + std::string(dtype_name(dtype)) + (tiled ? "_tiled" : "_stacked");
}

// Small values whose sums over 16 devices are exact in every dtype (and in
// float64), so the reference may add in any order.
Array summable_array(const Shape& shape, DType dtype, std::mt19937& rng) {
  Array a = Array::empty(shape, DType::kFloat64);
  for (double& v : a.mutable_span<double>()) {
    if (dtype == DType::kBool) {
      v = rng() % 2;
    } else if (is_floating(dtype)) {
      v = (static_cast<int>(rng() % 65) - 32) * 0.25;
    } else if (is_signed(dtype)) {
      v = static_cast<int>(rng() % 15) - 7;
    } else {
      v = rng() % 16;
    }
  }
  return a.astype(dtype);
}

// The sequential reference for the member of rank r: with rows = the product
// of the dims before `dim`, every x is rows x n x run, and the result, rows x
// run, holds at [o][i] the sum over members s of x_s[o][r][i].
Array reference_scatter(const std::vector<const Array*>& members, int r, int dim, bool tiled) {
  const Array& first = *members[0];
  const int64_t n = static_cast<int64_t>(members.size());
  Shape shape = first.shape();
  if (tiled) {
    shape[dim] /= n;
  } else {
    shape.erase(shape.begin() + dim);
  }
  int64_t rows = 1, row = 1;
  for (int d = 0; d < first.rank(); ++d) (d < dim ? rows : row) *= first.shape()[d];
  const int64_t run = row / n;
  Array sum = Array::zeros(shape, DType::kFloat64);
  std::span<double> out = sum.mutable_span<double>();
  for (const Array* m : members) {
    const Array values = m->astype(DType::kFloat64);
    const std::span<const double> in = values.span<double>();
    for (int64_t o = 0; o < rows; ++o) {
      for (int64_t i = 0; i < run; ++i) out[o * run + i] += in[o * row + r * run + i];
    }
  }
  return sum.astype(first.dtype() == DType::kBool ? DType::kInt32 : first.dtype());
}

class PsumScatterReferenceTest : public ::testing::TestWithParam<Param> {};

TEST_P(PsumScatterReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype, tiled] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const int num = mesh.size();
  const int dim = c.scatter_dimension < 0 ? c.scatter_dimension + static_cast<int>(c.shape.size())
                                          : c.scatter_dimension;
  Shape shape = c.shape;
  if (tiled) shape[dim] *= 2;  // two rows per part
  Runtime rt(num);
  std::mt19937 rng(5);
  std::vector<Array> inputs;
  for (int p = 0; p < num; ++p) inputs.push_back(summable_array(shape, dtype, rng));
  std::vector<Array> outputs(num);
  rt.launch(mesh, [&, &c = c, tiled = tiled](DeviceContext& ctx) {
    outputs[ctx.position()] = psum_scatter(
        ctx, inputs[ctx.position()], c.axes,
        {.scatter_dimension = c.scatter_dimension, .tiled = tiled, .axis_index_groups = c.groups});
  });
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes, c.groups);
  for (int p = 0; p < num; ++p) {
    std::vector<const Array*> members;
    for (int q : groups.members[groups.group_of[p]]) members.push_back(&inputs[q]);
    const Array expected = reference_scatter(members, groups.rank_of[p], dim, tiled);
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}, {}, 0, {1, 3}},
    {{{"x", 4}}, {"x"}, {}, 0, {4, 3}},
    {{{"x", 4}}, {"x"}, {}, -1, {2, 4}},
    {{{"x", 8}}, {"x"}, {{0, 2, 4, 6}, {7, 5, 3, 1}}, 1, {3, 4, 2}},
    {{{"x", 2}, {"y", 4}}, {"y"}, {}, 0, {4}},
    {{{"x", 2}, {"y", 4}}, {"x", "y"}, {}, 1, {2, 8}},
    {{{"x", 2}, {"y", 4}}, {"y", "x"}, {}, 0, {8, 2}},
    {{{"x", 2}, {"y", 4}}, {"y", "x"}, {{0, 5}, {4, 1}, {2, 7}, {3, 6}}, -2, {3, 2, 2}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"c", "a"}, {}, 0, {8, 1}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"b"}, {}, 1, {2, 2}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"a", "c", "b"}, {{0, 3, 5, 6, 9, 10, 12, 15}, {1, 2, 4, 7, 8, 11, 13, 14}}, 0, {8}},
    {{{"x", 4}}, {"x"}, {}, 1, {100, 4, 50}},  // the large, reduce-by-every-member path
};

INSTANTIATE_TEST_SUITE_P(AllDTypes, PsumScatterReferenceTest,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::Bool()),
                         param_name);

// Each part is bitwise the same slice of psum, for sums that round.
TEST(PsumScatterTest, PartsAreSlicesOfPsum) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  std::mt19937 rng(3);
  std::vector<Array> inputs;
  for (int p = 0; p < 4; ++p) {
    Array a = Array::empty({4, 5}, DType::kFloat32);
    for (float& v : a.mutable_span<float>()) v = std::ldexp(static_cast<float>(rng() % 1000), static_cast<int>(rng() % 40) - 20);
    inputs.push_back(a);
  }
  std::vector<Array> parts(4), sums(4);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    parts[ctx.position()] = psum_scatter(ctx, inputs[ctx.position()], "x");
    sums[ctx.position()] = psum(ctx, inputs[ctx.position()], "x");
  });
  for (int p = 0; p < 4; ++p) {
    const Array slice = Array::from_values<float>(
        {5}, std::span<const float>(sums[p].span<float>().subspan(p * 5, 5)));
    EXPECT_TRUE(array_equal(parts[p], slice)) << first_difference(parts[p], slice);
  }
}

// Empty inputs scatter to empty results of the right shape.
TEST(PsumScatterTest, EmptyInputs) {
  Runtime rt(2);
  std::vector<Array> stacked(2), tiled(2);
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    const Array x = Array::zeros({2, 0}, DType::kBool);
    stacked[ctx.position()] = psum_scatter(ctx, x, "x");
    tiled[ctx.position()] = psum_scatter(ctx, x, "x", {.tiled = true});
  });
  for (int p = 0; p < 2; ++p) {
    EXPECT_TRUE(array_equal(stacked[p], Array::zeros({0}, DType::kInt32))) << stacked[p];
    EXPECT_TRUE(array_equal(tiled[p], Array::zeros({1, 0}, DType::kInt32))) << tiled[p];
  }
}

// ----- errors -----------------------------------------------------------------

TEST(PsumScatterTest, ScatterDimensionThatDoesNotFitIsAShapeError) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           psum_scatter(ctx, Array::zeros({2, 6}, DType::kFloat32), "x",
                                        {.scatter_dimension = -1, .tiled = true});
                         }),
               ShapeError,
               "psum_scatter over 'x': scatter_dimension=-1 of x of shape (2, 6) has size 6, which is not "
               "divisible by the group size 4");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           psum_scatter(ctx, Array::zeros({8}, DType::kFloat32), "x");
                         }),
               ShapeError, "scatter_dimension=0 of x of shape (8) has size 8, which must equal the group size 4");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           psum_scatter(ctx, Array::zeros({4}, DType::kFloat32), "x",
                                        {.scatter_dimension = ctx.device_id() == 1 ? 1 : 0});
                         }),
               ShapeError, "device 1: psum_scatter over 'x': scatter_dimension=1 is out of range [-1, 1)");
}

TEST(PsumScatterTest, UnequalGroupsAreAGroupError) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           psum_scatter(ctx, Array::zeros({2}, DType::kInt32), "x",
                                        {.axis_index_groups = {{0, 1, 2}, {3}}});
                         }),
               GroupError, "psum_scatter over 'x': axis_index_groups [[0, 1, 2], [3]] over axes 'x' (size 4): group 1 has 1");
}

TEST(PsumScatterTest, DifferentScatterDimensionOnOneDeviceIsAMismatch) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [](DeviceContext& ctx) {
                           psum_scatter(ctx, Array::zeros({2, 2}, DType::kInt32), "x",
                                        {.scatter_dimension = ctx.device_id()});
                         }),
               CollectiveMismatchError,
               "device 0 called psum_scatter(int32(2, 2), scatter_dimension=0, tiled=false) but device 1 called "
               "psum_scatter(int32(2, 2), scatter_dimension=1, tiled=false)");
}

}  // namespace
}  // namespace meshsim::psum_scatter_test
