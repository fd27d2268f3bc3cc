// all_gather against the JAX docstring examples and an independent sequential
// reference, over meshes of 1-3 axes, tuple axes, groups, every dtype, stacked
// and tiled, negative axes and both algorithm paths; plus its errors.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::all_gather_test {
namespace {

Array iota_i32(Shape shape) { return Array::iota(std::move(shape), DType::kInt32); }

// jax.lax.all_gather docstring: pmap over x = arange(4); every device gets [0 1 2 3].
TEST(AllGatherTest, JaxDocstringStack) {
  Runtime rt(4);
  const std::vector<Array> out = pmap(
      rt, [](DeviceContext& ctx, std::span<const Array> x) { return std::vector{all_gather(ctx, x[0], "i")}; },
      "i", std::vector{iota_i32({4})});
  EXPECT_TRUE(array_equal(out[0], Array::from_values<int32_t>({4, 4}, {0, 1, 2, 3, 0, 1, 2, 3, 0, 1,
                                                                       2, 3, 0, 1, 2, 3})))
      << out[0];
}

// Docstring: x = arange(16).reshape(4, 4), axis_index_groups=[[0, 2], [3, 1]].
TEST(AllGatherTest, JaxDocstringGroups) {
  Runtime rt(4);
  const std::vector<Array> out = pmap(
      rt,
      [](DeviceContext& ctx, std::span<const Array> x) {
        return std::vector{all_gather(ctx, x[0], "i", {.axis_index_groups = {{0, 2}, {3, 1}}})};
      },
      "i", std::vector{iota_i32({4, 4})});
  const Array expected = Array::from_values<int32_t>(
      {4, 2, 4}, {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 4, 5, 6, 7,
                  0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 4, 5, 6, 7});
  EXPECT_TRUE(array_equal(out[0], expected)) << out[0];
}

// shard_map tutorial: x = [3, 9, 5, 2] over P('i'), tiled gather gives every
// device [3 9 5 2]; out_specs=P('i') concatenates the four copies.
TEST(AllGatherTest, ShardMapTutorialTiled) {
  Runtime rt(4);
  const Array x = Array::from_values<int32_t>({4}, {3, 9, 5, 2});
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [](DeviceContext& ctx, const Array& s) { return all_gather(ctx, s, "i", {.tiled = true}); },
      P{"i"}, P{"i"}, x);
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>(
                                   {16}, {3, 9, 5, 2, 3, 9, 5, 2, 3, 9, 5, 2, 3, 9, 5, 2})))
      << out;
}

// Hand-computed gathers along axis 1 of 2x2 shards on two devices.
TEST(AllGatherTest, AlongAxisOneByHand) {
  Runtime rt(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  const Array x = Array::from_values<int32_t>({2, 4}, {0, 1, 10, 11, 2, 3, 12, 13});
  // Device 0 holds [[0 1] [2 3]], device 1 [[10 11] [12 13]].
  const Array tiled = shard_map(
      rt, mesh,
      [](DeviceContext& ctx, const Array& s) { return all_gather(ctx, s, "x", {.axis = 1, .tiled = true}); },
      P{nullptr, "x"}, P{}, x);
  EXPECT_TRUE(array_equal(tiled, x)) << tiled;
  const Array stacked = shard_map(
      rt, mesh,
      [](DeviceContext& ctx, const Array& s) { return all_gather(ctx, s, "x", {.axis = -1}); },
      P{nullptr, "x"}, P{}, x);
  EXPECT_TRUE(array_equal(stacked, Array::from_values<int32_t>(
                                       {2, 2, 2}, {0, 10, 1, 11, 2, 12, 3, 13})))
      << stacked;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
  Shape shape;  // of every device's x
};

struct Mode {
  int axis;
  bool tiled;
};

using Param = std::tuple<Case, DType, Mode>;

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [c, dtype, mode] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes, c.groups);
  for (int64_t d : c.shape) name += "_" + std::to_string(d);
  name += std::string("_") + std::string(dtype_name(dtype)) + (mode.tiled ? "_tiled" : "_stacked") +
          "_axis" + (mode.axis < 0 ? "m" + std::to_string(-mode.axis) : std::to_string(mode.axis));
  return name;
}

// Distinct-ish values of every dtype (data is only moved, so any bits do).
Array random_array(const Shape& shape, DType dtype, std::mt19937& rng) {
  Array a = Array::empty(shape, DType::kFloat64);
  for (double& v : a.mutable_span<double>()) v = static_cast<int>(rng() % 100) + 0.25 * (rng() % 4);
  return a.astype(dtype);
}

// The sequential reference. With rows = the product of x's dims before
// `axis` and run = the product of the rest, the output is rows x n x run
// (stacked or tiled alike) and holds row o of member s's x at [o][s].
Array reference_gather(const std::vector<const Array*>& members, int axis, bool tiled) {
  const Array& first = *members[0];
  const int n = static_cast<int>(members.size());
  Shape shape = first.shape();
  if (tiled) {
    shape[axis] *= n;
  } else {
    shape.insert(shape.begin() + axis, n);
  }
  int64_t rows = 1, run = 1;
  for (int d = 0; d < first.rank(); ++d) (d < axis ? rows : run) *= first.shape()[d];
  const size_t run_bytes = run * dtype_size(first.dtype());
  Array out = Array::empty(shape, first.dtype());
  for (int64_t o = 0; o < rows; ++o) {
    for (int s = 0; s < n; ++s) {
      std::memcpy(out.mutable_bytes() + (o * n + s) * run_bytes, members[s]->bytes() + o * run_bytes,
                  run_bytes);
    }
  }
  return out;
}

class AllGatherReferenceTest : public ::testing::TestWithParam<Param> {};

TEST_P(AllGatherReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype, mode] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const int num = mesh.size();
  Runtime rt(num);
  std::mt19937 rng(99);
  std::vector<Array> inputs;
  for (int p = 0; p < num; ++p) inputs.push_back(random_array(c.shape, dtype, rng));
  std::vector<Array> outputs(num);
  rt.launch(mesh, [&, &c = c, mode = mode](DeviceContext& ctx) {
    outputs[ctx.position()] = all_gather(ctx, inputs[ctx.position()], c.axes,
                                         {.axis = mode.axis, .tiled = mode.tiled, .axis_index_groups = c.groups});
  });
  const int out_rank = static_cast<int>(c.shape.size()) + (mode.tiled ? 0 : 1);
  const int axis = mode.axis < 0 ? mode.axis + out_rank : mode.axis;
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes, c.groups);
  for (int p = 0; p < num; ++p) {
    std::vector<const Array*> members;
    for (int q : groups.members[groups.group_of[p]]) members.push_back(&inputs[q]);
    const Array expected = reference_gather(members, axis, mode.tiled);
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}, {}, {2, 2}},
    {{{"x", 4}}, {"x"}, {}, {2, 3}},
    {{{"x", 8}}, {"x"}, {{0, 2, 4, 6}, {7, 5, 3, 1}}, {3, 1}},
    {{{"x", 2}, {"y", 4}}, {"y"}, {}, {2, 2}},
    {{{"x", 2}, {"y", 4}}, {"x", "y"}, {}, {1, 3}},
    {{{"x", 2}, {"y", 4}}, {"y", "x"}, {}, {2, 1}},
    {{{"x", 2}, {"y", 4}}, {"y", "x"}, {{0, 5}, {4, 1}, {2, 7}, {3, 6}}, {2, 2}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"c", "a"}, {}, {2, 3}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"b"}, {}, {3, 2}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"a", "c", "b"}, {{0, 3, 5, 6, 9, 10, 12, 15}, {1, 2, 4, 7, 8, 11, 13, 14}}, {1, 2}},
    {{{"x", 4}}, {"x"}, {}, {64, 100}},  // the large, copy-by-every-member path
};

INSTANTIATE_TEST_SUITE_P(
    AllDTypes, AllGatherReferenceTest,
    ::testing::Combine(::testing::ValuesIn(kCases), ::testing::ValuesIn(kAllDTypes),
                       ::testing::Values(Mode{0, false}, Mode{0, true}, Mode{1, false},
                                         Mode{1, true}, Mode{-1, false}, Mode{-1, true},
                                         Mode{-3, false})),
    param_name);

// Every member gets the same bits, and so does a second run.
TEST(AllGatherTest, SameBitsOnEveryMember) {
  Runtime rt(8);
  const Mesh mesh = Mesh::make({{"x", 8}});
  std::vector<Array> first(8), again(8);
  for (auto* out : {&first, &again}) {
    rt.launch(mesh, [&](DeviceContext& ctx) {
      (*out)[ctx.position()] =
          all_gather(ctx, Array::full({3, 5}, DType::kFloat32, ctx.position() * 0.5), "x", {.axis = 1});
    });
  }
  for (int p = 0; p < 8; ++p) {
    EXPECT_TRUE(array_equal(first[p], first[0])) << first_difference(first[p], first[0]);
    EXPECT_TRUE(array_equal(again[p], first[0])) << first_difference(again[p], first[0]);
  }
}

// Empty shards gather to empty results of the right shape.
TEST(AllGatherTest, EmptyShards) {
  Runtime rt(2);
  std::vector<Array> tiled(2), stacked(2);
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    const Array x = Array::zeros({0, 3}, DType::kFloat32);
    tiled[ctx.position()] = all_gather(ctx, x, "x", {.tiled = true});
    stacked[ctx.position()] = all_gather(ctx, x, "x", {.axis = 1});
  });
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(tiled[p].shape(), (Shape{0, 3}));
    EXPECT_EQ(stacked[p].shape(), (Shape{0, 2, 3}));
  }
}

// ----- errors -----------------------------------------------------------------

TEST(AllGatherTest, AxisOutOfRangeIsAShapeErrorOnTheDevice) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  // Only device 2 passes the bad axis; the launch reports its error.
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           all_gather(ctx, Array::zeros({2}, DType::kFloat32), "x",
                                      {.axis = ctx.device_id() == 2 ? 2 : 0});
                         }),
               ShapeError, "device 2: all_gather over 'x': axis=2 is out of range [-2, 2) for x of shape (2)");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           all_gather(ctx, Array::zeros({2, 3}, DType::kFloat32), "x",
                                      {.axis = -3, .tiled = true});
                         }),
               ShapeError, "axis=-3 is out of range [-2, 2) for x of shape (2, 3)");
  // A tiled gather needs an existing dimension: a scalar has none.
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           all_gather(ctx, Array::scalar<float>(1), "x", {.tiled = true});
                         }),
               ShapeError, "axis=0 is out of range [0, 0) for x of shape ()");
}

TEST(AllGatherTest, UnequalGroupsAreAGroupError) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           all_gather(ctx, Array::zeros({1}, DType::kInt32), "x",
                                      {.axis_index_groups = {{0}, {1, 2, 3}}});
                         }),
               GroupError, "all_gather over 'x': axis_index_groups [[0], [1, 2, 3]] over axes 'x' (size 4): group 1 has 3");
}

TEST(AllGatherTest, DifferentTiledOnOneDeviceIsAMismatch) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           all_gather(ctx, Array::zeros({2}, DType::kInt32), "x",
                                      {.tiled = ctx.device_id() == 3});
                         }),
               CollectiveMismatchError,
               "device 0 called all_gather(int32(2), axis=0, tiled=false) but device 3 called "
               "all_gather(int32(2), axis=0, tiled=true)");
}

}  // namespace
}  // namespace meshsim::all_gather_test
