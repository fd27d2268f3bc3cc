// pargmax / pargmin against hand-computed answers (ties, NaN) and an
// independent sequential reference over one axis of 1-3 axis meshes, several
// dtypes and both algorithm paths; plus their errors. Also the free
// axis_index / axis_size against the jax.lax.axis_index docstring.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::argreduce_test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Rows are devices 0-3 of axis 'i'. Column 0: 3 on devices 1 and 2 (a tie
// goes to 1), min -1 on 3. Column 1: max 9 on 3, min 0 on 2. Column 2: NaN
// on devices 1 and 3 wins both ways, at the lower index.
TEST(ArgReduceTest, TiesAndNaNByHand) {
  Runtime rt(4);
  const Array x = Array::from_values<float>({4, 3}, {1, 5, 2, 3, 5, kNaN, 3, 0, 7, -1, 9, kNaN});
  const auto run = [&](bool max) {
    return pmap(
        rt,
        [&](DeviceContext& ctx, std::span<const Array> s) {
          return std::vector{max ? pargmax(ctx, s[0], "i") : pargmin(ctx, s[0], "i")};
        },
        "i", std::vector{x})[0];
  };
  const Array argmax = run(true), argmin = run(false);
  EXPECT_TRUE(array_equal(argmax, Array::from_values<int32_t>({4, 3}, {1, 3, 1, 1, 3, 1, 1, 3, 1, 1, 3, 1})))
      << argmax;
  EXPECT_TRUE(array_equal(argmin, Array::from_values<int32_t>({4, 3}, {3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1})))
      << argmin;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::string axis;
  int64_t elements;
};

using Param = std::tuple<Case, DType, bool>;  // bool: max

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [c, dtype, max] = info.param;
  std::string name;
  for (const auto& [axis, size] : c.mesh) name += axis + std::to_string(size);
  return name + "_over_" + c.axis + "_" + std::to_string(c.elements) + "_" +
         std::string(dtype_name(dtype)) + (max ? "_argmax" : "_argmin");
}

class ArgReduceReferenceTest : public ::testing::TestWithParam<Param> {};

// Few distinct values, so ties are common, and some NaN in float dtypes.
TEST_P(ArgReduceReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype, max] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const AbstractMesh& shape = mesh.abstract_mesh();
  const int num = mesh.size();
  Runtime rt(num);
  std::mt19937 rng(11);
  std::vector<Array> inputs;
  for (int p = 0; p < num; ++p) {
    Array a = Array::empty({c.elements}, DType::kFloat64);
    for (double& v : a.mutable_span<double>()) {
      v = rng() % 23 == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<int>(rng() % 5);
      if (!is_floating(dtype) && std::isnan(v)) v = 4;
    }
    inputs.push_back(a.astype(dtype));
  }
  std::vector<Array> outputs(num);
  rt.launch(mesh, [&, &c = c, max = max](DeviceContext& ctx) {
    const Array& x = inputs[ctx.position()];
    outputs[ctx.position()] = max ? pargmax(ctx, x, c.axis) : pargmin(ctx, x, c.axis);
  });
  const int a = shape.axis_position(c.axis);
  for (int p = 0; p < num; ++p) {
    // The devices along the axis through p, by axis index.
    std::vector<Array> along;
    std::vector<int> coords = shape.coords(p);
    for (int i = 0; i < shape.axis_sizes()[a]; ++i) {
      coords[a] = i;
      along.push_back(inputs[shape.position(coords)].astype(DType::kFloat64));
    }
    Array expected = Array::zeros({c.elements}, DType::kInt32);
    for (int64_t e = 0; e < c.elements; ++e) {
      double best = along[0].span<double>()[e];
      for (int i = 1; i < static_cast<int>(along.size()); ++i) {
        const double v = along[i].span<double>()[e];
        const bool wins = !std::isnan(best) && (std::isnan(v) || (max ? v > best : v < best));
        if (wins) {
          best = v;
          expected.mutable_span<int32_t>()[e] = i;
        }
      }
    }
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 1}}, "x", 3},
    {{{"x", 5}}, "x", 40},
    {{{"x", 2}, {"y", 4}}, "y", 17},
    {{{"x", 2}, {"y", 4}}, "x", 9},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, "c", 33},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, "a", 5},
    {{{"x", 3}}, "x", 30'000},  // the large path: every member scans
};

INSTANTIATE_TEST_SUITE_P(
    SomeDTypes, ArgReduceReferenceTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(DType::kBool, DType::kInt8, DType::kUInt32, DType::kInt64,
                                         DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                         DType::kFloat64),
                       ::testing::Bool()),
    param_name);

TEST(ArgReduceTest, EmptyInputs) {
  Runtime rt(2);
  std::vector<Array> out(2);
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    out[ctx.position()] = pargmax(ctx, Array::zeros({3, 0}, DType::kFloat16), "x");
  });
  for (int p = 0; p < 2; ++p) EXPECT_TRUE(array_equal(out[p], Array::zeros({3, 0}, DType::kInt32))) << out[p];
}

TEST(ArgReduceTest, OnlyOneAxis) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}, {"y", 2}}),
                         [](DeviceContext& ctx) { pargmax(ctx, Array::zeros({1}, DType::kFloat32), {"x", "y"}); }),
               InvalidArgumentError, "pargmax only accepts a single axis, got ('x', 'y')");
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) { pargmin(ctx, Array::zeros({1}, DType::kFloat32), "y"); }),
               AxisError, "unknown axis 'y'");
}

TEST(ArgReduceTest, DifferentShapesAreAMismatch) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [](DeviceContext& ctx) {
                           pargmin(ctx, Array::zeros({2 + ctx.device_id()}, DType::kFloat32), "x");
                         }),
               CollectiveMismatchError, "device 0 called pargmin(float32(2)) but device 1 called pargmin(float32(3))");
}

// ----- axis_index / axis_size ------------------------------------------------------

// jax.lax.axis_index docstring: pmap over 'i' of 4 gives [0 1 2 3].
TEST(AxisTest, JaxDocstringPmap) {
  Runtime rt(4);
  const Array out = pmap(
      rt,
      [](DeviceContext& ctx, std::span<const Array>) {
        return std::vector{Array::scalar<int32_t>(axis_index(ctx, "i"))};
      },
      "i", std::vector{Array::zeros({4}, DType::kFloat32)})[0];
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>({4}, {0, 1, 2, 3}))) << out;
}

// On (i=4, j=2): axis_index over ('i', 'j') is i*2 + j, over ('j', 'i') j*4 + i.
TEST(AxisTest, SeveralAxesCombineMajorToMinor) {
  Runtime rt(8);
  std::vector<std::vector<int>> seen(8);
  rt.launch(Mesh::make({{"i", 4}, {"j", 2}}), [&](DeviceContext& ctx) {
    seen[ctx.position()] = {axis_index(ctx, "i"),          axis_index(ctx, "j"),
                            axis_index(ctx, {"i", "j"}),   axis_index(ctx, {"j", "i"}),
                            axis_size(ctx, "i"),           axis_size(ctx, {"j", "i"})};
  });
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(seen[i * 2 + j], (std::vector<int>{i, j, i * 2 + j, j * 4 + i, 4, 8})) << i << ", " << j;
    }
  }
  EXPECT_ERROR(rt.launch(Mesh::make({{"i", 4}, {"j", 2}}), [](DeviceContext& ctx) { axis_size(ctx, "k"); }),
               AxisError, "unknown axis 'k'");
}

}  // namespace
}  // namespace meshsim::argreduce_test
