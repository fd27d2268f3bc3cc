// pbroadcast: the JAX docstring's definition as a known answer, exact bits,
// a randomized reference over meshes, axes, dtypes and sources, the source
// range check, and a source mismatch.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::pbroadcast_test {
namespace {

// JAX: pbroadcast(x, 'i', source) == psum(where(axis_index('i') == source, x, 0)):
// with x = [10, 20, 30, 40] and source 2, every device holds 30 — a replicated
// output, which shard_map checks bitwise.
TEST(PbroadcastTest, EveryDeviceGetsTheSourceValue) {
  Runtime rt(4);
  const Array out = shard_map(
      rt, Mesh::make({{"i", 4}}),
      [](DeviceContext& ctx, const Array& x) { return pbroadcast(ctx, x, "i", 2); }, P{"i"}, P{},
      Array::from_values<int32_t>({4}, {10, 20, 30, 40}));
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>({1}, {30}))) << out;
}

// No arithmetic: -0.0 and NaN payloads arrive as they left (a psum-based
// broadcast would turn -0.0 + 0.0 into 0.0).
TEST(PbroadcastTest, KeepsEveryBit) {
  Runtime rt(3);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Array> inputs = {Array::from_values<float>({2}, {1, 2}),
                                     Array::from_values<float>({2}, {-0.0f, nan}),
                                     Array::from_values<float>({2}, {5, 6})};
  std::vector<Array> outputs(3);
  rt.launch(Mesh::make({{"x", 3}}), [&](DeviceContext& ctx) {
    outputs[ctx.position()] = pbroadcast(ctx, inputs[ctx.position()], "x", 1);
  });
  for (int p = 0; p < 3; ++p) {
    EXPECT_TRUE(array_equal(outputs[p], inputs[1])) << p << ": " << outputs[p];
    EXPECT_TRUE(std::signbit(outputs[p].at<float>({0})));
  }
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  Shape shape;
};

// Which member is the source: the first, the last, or one in the middle.
enum class Source { kFirst, kMiddle, kLast };

using Param = std::tuple<Case, DType, Source>;

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  const auto& [c, dtype, source] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes);
  const char* which[] = {"first", "middle", "last"};
  return name + "_" + std::string(dtype_name(dtype)) + "_" + which[static_cast<int>(source)];
}

class PbroadcastReferenceTest : public ::testing::TestWithParam<Param> {};

// Each device must end with the input of the member of its group whose axis
// index is the source.
TEST_P(PbroadcastReferenceTest, MatchesReference) {
  const auto& [c, dtype, which] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const int devices = mesh.size();
  std::vector<Array> inputs;
  for (int p = 0; p < devices; ++p) {
    Array a = Array::empty(c.shape, DType::kFloat64);
    double value = 100.0 * p + 1;
    for (double& v : a.mutable_span<double>()) v = value++;
    inputs.push_back(a.astype(dtype));
  }
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes);
  const int n = static_cast<int>(groups.members[0].size());
  const int source = which == Source::kFirst ? 0 : which == Source::kLast ? n - 1 : n / 2;
  std::vector<Array> outputs(devices);
  Runtime rt(devices);
  rt.launch(mesh, [&, &c = c](DeviceContext& ctx) {
    outputs[ctx.position()] = pbroadcast(ctx, inputs[ctx.position()], c.axes, source);
  });
  for (int p = 0; p < devices; ++p) {
    const Array& expected = inputs[groups.members[groups.group_of[p]][source]];
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}, {2}},
    {{{"x", 2}}, {"x"}, {3, 2}},
    {{{"x", 16}}, {"x"}, {4}},
    {{{"x", 4}, {"y", 4}}, {"x"}, {3}},
    {{{"x", 4}, {"y", 4}}, {"x", "y"}, {1}},
    {{{"x", 4}, {"y", 4}}, {"y", "x"}, {2, 2}},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"c", "a"}, {3}},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"b", "c"}, {}},
};

INSTANTIATE_TEST_SUITE_P(
    Pbroadcast, PbroadcastReferenceTest,
    ::testing::Combine(::testing::ValuesIn(kCases),
                       ::testing::Values(DType::kFloat32, DType::kInt8, DType::kBFloat16,
                                         DType::kBool, DType::kUInt32),
                       ::testing::Values(Source::kFirst, Source::kMiddle, Source::kLast)),
    case_name);

class PbroadcastSourceTest : public ::testing::TestWithParam<int> {};

TEST_P(PbroadcastSourceTest, OutOfRangeSourceIsAnError) {
  Runtime rt(4);
  const int source = GetParam();
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}, {"y", 2}}),
                         [&](DeviceContext& ctx) {
                           pbroadcast(ctx, Array::zeros({1}, DType::kFloat32), {"y", "x"}, source);
                         }),
               InvalidArgumentError,
               "pbroadcast over ('y', 'x'): source " + std::to_string(source) +
                   " is out of range [0, 4) for axis size 4");
}

INSTANTIATE_TEST_SUITE_P(Pbroadcast, PbroadcastSourceTest, ::testing::Values(-1, 4));

TEST(PbroadcastTest, DifferentSourceOnOneDeviceIsAMismatch) {
  Runtime rt(3);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 3}}),
                         [](DeviceContext& ctx) {
                           pbroadcast(ctx, Array::zeros({2}, DType::kInt32), "x",
                                      ctx.position() == 1 ? 2 : 0);
                         }),
               CollectiveMismatchError,
               "device 0 called pbroadcast(int32(2), source=0) but device 1 called "
               "pbroadcast(int32(2), source=2)");
}

}  // namespace
}  // namespace meshsim::pbroadcast_test
