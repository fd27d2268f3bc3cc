// all_to_all and pswapaxes against the JAX examples and an independent
// sequential reference written from the JAX docstring (index by index), over
// meshes of 1-3 axes, tuple axes, groups, every dtype, stacked and tiled,
// negative axes and both algorithm paths; plus back-to-back rounds and errors.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/param_names.h"
#include "support/reference_collectives.h"

namespace meshsim::all_to_all_test {
namespace {

// The shard_map tutorial's all_to_all: x over P('i') on 4 devices, split and
// concatenated along axis 0, tiled.
TEST(AllToAllTest, ShardMapTutorialExample) {
  Runtime rt(4);
  const Array x = Array::from_values<int32_t>({16}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 1, 2});
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [](DeviceContext& ctx, const Array& s) { return all_to_all(ctx, s, "i", 0, 0, {.tiled = true}); },
      P{"i"}, P{"i"}, x);
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>(
                                   {16}, {3, 5, 5, 9, 1, 9, 3, 7, 4, 2, 5, 1, 1, 6, 8, 2})))
      << out;
}

// Stacked, split_axis=0, concat_axis=1 on two devices holding
// x0 = [[0 1 2] [3 4 5]] and x1 = [[6 7 8] [9 10 11]]: the output has shape
// (3, 2) and out_r[j][s] = x_s[r][j].
TEST(AllToAllTest, StackedByHand) {
  Runtime rt(2);
  const Array x = Array::iota({4, 3}, DType::kInt32);
  const Array out = shard_map(
      rt, Mesh::make({{"x", 2}}),
      [](DeviceContext& ctx, const Array& s) { return all_to_all(ctx, s, "x", 0, 1); }, P{"x"},
      P{"x"}, x);
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>(
                                   {6, 2}, {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11})))
      << out;
}

// pswapaxes swaps the device axis with a positional one, by hand on 2 devices.
TEST(PswapaxesTest, ByHand) {
  Runtime rt(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  const Array x = Array::iota({4, 3}, DType::kInt32);
  const Array rows = shard_map(
      rt, mesh, [](DeviceContext& ctx, const Array& s) { return pswapaxes(ctx, s, "x", 0); }, P{"x"},
      P{"x"}, x);
  EXPECT_TRUE(array_equal(rows, Array::from_values<int32_t>(
                                    {4, 3}, {0, 1, 2, 6, 7, 8, 3, 4, 5, 9, 10, 11})))
      << rows;
  // Device 0 holds [[0 1] [4 5] [8 9]], device 1 [[2 3] [6 7] [10 11]].
  const Array y = Array::iota({3, 4}, DType::kInt32);
  const Array cols = shard_map(
      rt, mesh, [](DeviceContext& ctx, const Array& s) { return pswapaxes(ctx, s, "x", -1); },
      P{nullptr, "x"}, P{nullptr, "x"}, y);
  EXPECT_TRUE(array_equal(cols, Array::from_values<int32_t>(
                                    {3, 4}, {0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11})))
      << cols;
}

using reference::ravel;
using reference::unravel;

// The sequential reference for the member of rank r, element by element as
// the JAX docstring defines it. members[s] is the x of rank s; split and
// concat are already in [0, rank).
Array reference_all_to_all(const std::vector<const Array*>& members, int r, int split, int concat,
                           bool tiled) {
  const Shape& x_shape = members[0]->shape();
  const int64_t n = static_cast<int64_t>(members.size());
  Shape shape = x_shape;
  if (tiled) {
    shape[split] /= n;
    shape[concat] *= n;
  } else {
    shape.erase(shape.begin() + split);
    shape.insert(shape.begin() + concat, n);
  }
  const int64_t chunk = x_shape[split] / n;  // along split_axis
  const int64_t block = split == concat ? chunk : x_shape[concat];  // per sender along concat_axis
  const size_t esize = dtype_size(members[0]->dtype());
  Array out = Array::empty(shape, members[0]->dtype());
  for (int64_t f = 0; f < out.size(); ++f) {
    const Shape index = unravel(f, shape);
    int64_t s;
    Shape source;
    if (tiled) {
      // Block s of concat_axis came from rank s; it is chunk r of its split_axis.
      s = index[concat] / block;
      source = index;
      source[concat] = index[concat] % block;
      source[split] += r * chunk;
    } else {
      // out[..., s at concat, ...] = x_s[..., r at split, ...]
      s = index[concat];
      source = index;
      source.erase(source.begin() + concat);
      source.insert(source.begin() + split, r);
    }
    std::memcpy(out.mutable_bytes() + f * esize, members[s]->bytes() + ravel(source, x_shape) * esize,
                esize);
  }
  return out;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
  Shape shape;  // of every device's x, with the group size at split_axis
  int split_axis;
  int concat_axis;
};

using Param = std::tuple<Case, DType, bool>;

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [c, dtype, tiled] = info.param;
  const auto number = [](int v) { return v < 0 ? "m" + std::to_string(-v) : std::to_string(v); };
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes, c.groups);
  for (int64_t d : c.shape) name += "_" + std::to_string(d);
  name += "_split" + number(c.split_axis) + "_concat" + number(c.concat_axis);
  return name + "_" + std::string(dtype_name(dtype)) + (tiled ? "_tiled" : "_stacked");
}

Array random_array(const Shape& shape, DType dtype, std::mt19937& rng) {
  Array a = Array::empty(shape, DType::kFloat64);
  for (double& v : a.mutable_span<double>()) v = static_cast<int>(rng() % 100) + 0.25 * (rng() % 4);
  return a.astype(dtype);
}

int normalized(int axis, int rank) { return axis < 0 ? axis + rank : axis; }

// Runs `op` on every device of the case's mesh and checks each result
// against reference_all_to_all(split, concat, tiled) for its group.
template <class Op>
void check_against_reference(const Case& c, const Shape& shape, DType dtype, int split, int concat,
                             bool tiled, Op op) {
  const Mesh mesh = Mesh::make(c.mesh);
  const int num = mesh.size();
  Runtime rt(num);
  std::mt19937 rng(17);
  std::vector<Array> inputs;
  for (int p = 0; p < num; ++p) inputs.push_back(random_array(shape, dtype, rng));
  std::vector<Array> outputs(num);
  rt.launch(mesh, [&](DeviceContext& ctx) {
    outputs[ctx.position()] = op(ctx, inputs[ctx.position()]);
  });
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes, c.groups);
  for (int p = 0; p < num; ++p) {
    std::vector<const Array*> members;
    for (int q : groups.members[groups.group_of[p]]) members.push_back(&inputs[q]);
    const Array expected = reference_all_to_all(members, groups.rank_of[p], split, concat, tiled);
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

class AllToAllReferenceTest : public ::testing::TestWithParam<Param> {};

TEST_P(AllToAllReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype, tiled] = GetParam();
  const int rank = static_cast<int>(c.shape.size());
  const int split = normalized(c.split_axis, rank);
  const int concat = normalized(c.concat_axis, rank);
  Shape shape = c.shape;
  if (tiled) shape[split] *= 2;  // chunks of two
  check_against_reference(c, shape, dtype, split, concat, tiled,
                          [&, &c = c, tiled = tiled](DeviceContext& ctx, const Array& x) {
                            return all_to_all(ctx, x, c.axes, c.split_axis, c.concat_axis,
                                              {.tiled = tiled, .axis_index_groups = c.groups});
                          });
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}, {}, {1, 2}, 0, 1},
    {{{"x", 4}}, {"x"}, {}, {4}, 0, 0},
    {{{"x", 4}}, {"x"}, {}, {4, 3}, 0, 1},
    {{{"x", 4}}, {"x"}, {}, {3, 4}, 1, 0},
    {{{"x", 4}}, {"x"}, {}, {2, 4, 3}, -2, -1},
    {{{"x", 4}}, {"x"}, {}, {2, 3, 4}, 2, 0},
    {{{"x", 8}}, {"x"}, {{0, 2, 4, 6}, {7, 5, 3, 1}}, {4, 2}, 0, 1},
    {{{"x", 2}, {"y", 4}}, {"y", "x"}, {}, {2, 8}, 1, 1},
    {{{"x", 2}, {"y", 4}}, {"x", "y"}, {}, {3, 8}, 1, 0},
    {{{"x", 2}, {"y", 4}}, {"y"}, {}, {4, 2, 2}, 0, 2},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"c", "a"}, {}, {8, 2}, 0, 1},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"b"}, {}, {2, 3, 2}, -3, -2},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"b", "c"}, {{0, 3, 5, 6}, {1, 2, 4, 7}}, {3, 4}, 1, 1},
    {{{"x", 4}}, {"x"}, {}, {4, 100, 60}, 0, 2},  // the large, copy-by-every-member path
    // One dim split and concatenated behind dims of size 1: byte ranges.
    {{{"x", 4}}, {"x"}, {}, {1, 4, 3}, 1, 1},
    {{{"x", 2}, {"y", 4}}, {"y"}, {}, {1, 4}, -1, -1},
};

INSTANTIATE_TEST_SUITE_P(AllDTypes, AllToAllReferenceTest,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::ValuesIn(kAllDTypes),
                                            ::testing::Bool()),
                         param_name);

class PswapaxesReferenceTest : public ::testing::TestWithParam<Param> {};

// pswapaxes(x, axes, axis) = all_to_all(x, axes, axis, axis) stacked.
TEST_P(PswapaxesReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype, tiled] = GetParam();
  ASSERT_EQ(c.split_axis, c.concat_axis);
  ASSERT_FALSE(tiled);
  const int axis = normalized(c.split_axis, static_cast<int>(c.shape.size()));
  check_against_reference(c, c.shape, dtype, axis, axis, false,
                          [&, &c = c](DeviceContext& ctx, const Array& x) {
                            return pswapaxes(ctx, x, c.axes, c.split_axis, c.groups);
                          });
}

const Case kSwapCases[] = {
    {{{"x", 4}}, {"x"}, {}, {4, 3}, 0, 0},
    {{{"x", 2}, {"y", 4}}, {"y", "x"}, {}, {2, 8}, -1, -1},
    {{{"x", 2}, {"y", 4}}, {"x"}, {}, {3, 2, 5}, 1, 1},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"b", "c"}, {{0, 3, 5, 6}, {1, 2, 4, 7}}, {3, 4}, 1, 1},
};

INSTANTIATE_TEST_SUITE_P(SomeDTypes, PswapaxesReferenceTest,
                         ::testing::Combine(::testing::ValuesIn(kSwapCases),
                                            ::testing::Values(DType::kBool, DType::kInt8, DType::kBFloat16,
                                                              DType::kFloat32, DType::kFloat64),
                                            ::testing::Values(false)),
                         param_name);

// Rounds back to back in one launch, no outside synchronization, alternating
// the one-barrier and the departure paths and two collectives on one group:
// a member that leaves early must never disturb a slow one.
TEST(AllToAllTest, BackToBackRoundsAlternatingPaths) {
  constexpr int kDevices = 8, kRounds = 60;
  Runtime rt(kDevices);
  std::vector<int> bad(kDevices, 0);
  rt.launch(Mesh::make({{"x", kDevices}}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    for (int k = 0; k < kRounds; ++k) {
      const int64_t m = k % 2 ? 4096 : 1;
      const Array y = all_to_all(ctx, Array::full({kDevices * m}, DType::kInt32, p * 1000 + k), "x", 0,
                                 0, {.tiled = true});
      const Array g = all_gather(ctx, Array::full({m}, DType::kInt32, p + k), "x", {.tiled = true});
      for (int64_t i = 0; i < kDevices * m; ++i) {
        const int s = static_cast<int>(i / m);
        bad[p] += y.span<int32_t>()[i] != s * 1000 + k;
        bad[p] += g.span<int32_t>()[i] != s + k;
      }
    }
  });
  EXPECT_EQ(bad, std::vector<int>(kDevices, 0));
}

// Empty inputs exchange into empty results of the right shape.
TEST(AllToAllTest, EmptyInputs) {
  Runtime rt(2);
  std::vector<Array> stacked(2), tiled(2);
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    const Array x = Array::zeros({2, 0}, DType::kInt8);
    stacked[ctx.position()] = all_to_all(ctx, x, "x", 0, 1);
    tiled[ctx.position()] = all_to_all(ctx, x, "x", 0, 1, {.tiled = true});
  });
  for (int p = 0; p < 2; ++p) {
    EXPECT_EQ(stacked[p].shape(), (Shape{0, 2}));
    EXPECT_EQ(tiled[p].shape(), (Shape{1, 0}));
  }
}

// ----- errors -----------------------------------------------------------------

TEST(AllToAllTest, SplitAxisThatDoesNotFitIsAShapeError) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           all_to_all(ctx, Array::zeros({6, 2}, DType::kFloat32), "x", 0, 1, {.tiled = true});
                         }),
               ShapeError,
               "all_to_all over 'x': split_axis=0 of x of shape (6, 2) has size 6, which is not divisible "
               "by the group size 4");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           all_to_all(ctx, Array::zeros({2, 8}, DType::kFloat32), "x", -1, 0);
                         }),
               ShapeError, "split_axis=-1 of x of shape (2, 8) has size 8, which must equal the group size 4");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           pswapaxes(ctx, Array::zeros({3}, DType::kFloat32), "x", 0);
                         }),
               ShapeError, "pswapaxes over 'x': axis=0 of x of shape (3) has size 3, which must equal the group size 4");
}

TEST(AllToAllTest, AxisOutOfRangeIsAShapeErrorOnTheDevice) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           all_to_all(ctx, Array::zeros({4, 2}, DType::kFloat32), "x", 0,
                                      ctx.device_id() == 3 ? 2 : 1);
                         }),
               ShapeError, "device 3: all_to_all over 'x': concat_axis=2 is out of range [-2, 2) for x of shape (4, 2)");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           all_to_all(ctx, Array::zeros({4, 2}, DType::kFloat32), "x", -3, 0);
                         }),
               ShapeError, "split_axis=-3 is out of range [-2, 2)");
  EXPECT_ERROR(rt.launch(mesh,
                         [](DeviceContext& ctx) {
                           pswapaxes(ctx, Array::zeros({4}, DType::kFloat32), "x", 1);
                         }),
               ShapeError, "pswapaxes over 'x': axis=1 is out of range [-1, 1)");
}

TEST(AllToAllTest, UnequalGroupsAreAGroupError) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           all_to_all(ctx, Array::zeros({2}, DType::kInt32), "x", 0, 0,
                                      {.axis_index_groups = {{0, 1}, {2}, {3}}});
                         }),
               GroupError, "all_to_all over 'x': axis_index_groups [[0, 1], [2], [3]] over axes 'x' (size 4): group 1 has 1");
}

TEST(AllToAllTest, DifferentConcatAxisOnOneDeviceIsAMismatch) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [](DeviceContext& ctx) {
                           all_to_all(ctx, Array::zeros({2, 2}, DType::kInt32), "x", 0,
                                      ctx.device_id() == 1 ? 0 : 1, {.tiled = true});
                         }),
               CollectiveMismatchError,
               "device 0 called all_to_all(int32(2, 2), split_axis=0, concat_axis=1, tiled=true) but device 1 "
               "called all_to_all(int32(2, 2), split_axis=0, concat_axis=0, tiled=true)");
}

}  // namespace
}  // namespace meshsim::all_to_all_test
