// pmean against the JAX docstring, hand-computed answers for its rounding and
// integer rules, and an independent sequential reference over every dtype,
// meshes of 1-3 axes, tuple axes and groups (uneven ones too).

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::pmean_test {
namespace {

// jax.lax.pmean docstring: pmap over x = arange(4) gives [1.5 1.5 1.5 1.5],
// float32 from int32 input.
TEST(PmeanTest, JaxDocstring) {
  Runtime rt(4);
  const Array out = pmap(
      rt, [](DeviceContext& ctx, std::span<const Array> x) { return std::vector{pmean(ctx, x[0], "i")}; }, "i",
      std::vector{Array::iota({4}, DType::kInt32)})[0];
  EXPECT_TRUE(array_equal(out, Array::full({4}, DType::kFloat32, 1.5))) << out;
}

Array pmean_over_x(Runtime& rt, const Array& per_device_rows) {
  return pmap(
      rt, [](DeviceContext& ctx, std::span<const Array> x) { return std::vector{pmean(ctx, x[0], "x")}; }, "x",
      std::vector{per_device_rows})[0];
}

// bfloat16: 256 + 4 + 1 = 261 in float32, / 3 = 87 once rounded. Rounding the
// sum to bfloat16 first (260) would give 86.5.
TEST(PmeanTest, HalfFloatsRoundOnce) {
  Runtime rt(3);
  const Array x = Array::from_values<float>({3}, {256, 4, 1}).astype(DType::kBFloat16);
  const Array out = pmean_over_x(rt, x);
  EXPECT_TRUE(array_equal(out, Array::full({3}, DType::kBFloat16, 87))) << out;
}

// Integers follow JAX's psum-then-divide: the int8 sum 100 + 100 wraps to
// -56, and the mean is -28 in float32. bool counts: 2 of 4 true is 0.5.
TEST(PmeanTest, IntegersWrapThenDivideInFloat32) {
  Runtime rt(4);
  const Array wrapped = pmean_over_x(rt, Array::from_values<int8_t>({2}, {100, 100}));
  EXPECT_TRUE(array_equal(wrapped, Array::full({2}, DType::kFloat32, -28))) << wrapped;
  const Array half = pmean_over_x(rt, Array::from_values<bool>({4}, {true, false, false, true}));
  EXPECT_TRUE(array_equal(half, Array::full({4}, DType::kFloat32, 0.5))) << half;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
};

using Param = std::tuple<Case, DType>;

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [c, dtype] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes, c.groups);
  return name + "_" + std::string(dtype_name(dtype));
}

class PmeanReferenceTest : public ::testing::TestWithParam<Param> {};

// Values whose sums are exact, so the reference is the exact mean rounded
// once: to float64 for float64, else to float32, then to a 16-bit float.
TEST_P(PmeanReferenceTest, MatchesSequentialReference) {
  const auto& [c, dtype] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const int num = mesh.size();
  constexpr int64_t kElements = 7;
  Runtime rt(num);
  std::mt19937 rng(21);
  std::vector<Array> inputs;
  for (int p = 0; p < num; ++p) {
    Array a = Array::empty({kElements}, DType::kFloat64);
    for (double& v : a.mutable_span<double>()) {
      if (dtype == DType::kBool) {
        v = rng() % 2;
      } else if (is_signed(dtype)) {
        v = static_cast<int>(rng() % 15) - 7 + (is_floating(dtype) ? 0.25 * (rng() % 4) : 0.0);
      } else {
        v = rng() % 16;
      }
    }
    inputs.push_back(a.astype(dtype));
  }
  std::vector<Array> outputs(num);
  rt.launch(mesh, [&, &c = c](DeviceContext& ctx) {
    outputs[ctx.position()] = pmean(ctx, inputs[ctx.position()], c.axes, c.groups);
  });
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes, c.groups, false);
  for (int p = 0; p < num; ++p) {
    const auto& members = groups.members[groups.group_of[p]];
    Array mean = Array::zeros({kElements}, DType::kFloat64);
    for (int q : members) {
      const Array values = inputs[q].astype(DType::kFloat64);
      for (int64_t e = 0; e < kElements; ++e) mean.mutable_span<double>()[e] += values.span<double>()[e];
    }
    for (double& v : mean.mutable_span<double>()) v /= static_cast<double>(members.size());
    const Array expected = dtype == DType::kFloat64 ? mean
                           : is_floating(dtype)     ? mean.astype(DType::kFloat32).astype(dtype)
                                                    : mean.astype(DType::kFloat32);
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}, {}},
    {{{"x", 6}}, {"x"}, {}},
    {{{"x", 8}}, {"x"}, {{0, 5}, {1, 2, 3, 4, 6, 7}}},  // uneven groups: 2 and 6
    {{{"x", 2}, {"y", 3}}, {"y"}, {}},
    {{{"x", 2}, {"y", 3}}, {"y", "x"}, {}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"c", "a"}, {{0, 1, 2}, {3, 4, 5, 6, 7}}},
    {{{"a", 2}, {"b", 2}, {"c", 4}}, {"a", "b", "c"}, {}},
};

INSTANTIATE_TEST_SUITE_P(AllDTypes, PmeanReferenceTest,
                         ::testing::Combine(::testing::ValuesIn(kCases), ::testing::ValuesIn(kAllDTypes)),
                         param_name);

TEST(PmeanTest, InvalidGroupsAreAGroupError) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [](DeviceContext& ctx) {
                           pmean(ctx, Array::zeros({1}, DType::kFloat32), "x", {{0, 1}, {3}});
                         }),
               GroupError, "index 2 is in no group");
}

}  // namespace
}  // namespace meshsim::pmean_test
