// The sharded matmul of the jax.shard_map documentation, checked against
// Eigen's product of the global matrices: A sharded P('x', 'y'), B sharded
// P('y', None); each device multiplies its blocks and psums over 'y'; the
// result is P('x', None), so shard_map also checks that it is replicated over
// 'y' (and over any axis the specs leave out).

#include <gtest/gtest.h>

#include <random>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "meshsim/collectives/reductions.h"
#include "meshsim/runtime/array/array_views.h"
#include "meshsim/runtime/drivers/shard_map.h"

namespace meshsim::sharded_matmul_test {
namespace {

using MeshAxes = std::vector<std::pair<std::string, int>>;

enum class Operands {
  kRandom,     // A (8, 3 * |y|), B (3 * |y|, 5): small integers, or uniform reals for float32
  kJaxArange,  // the docstring's A = arange(8 * 16).reshape(8, 16), B = arange(16 * 4).reshape(16, 4)
};

template <class T>
Array local_matmul(const Array& a, const Array& b) {
  return from_eigen(matrix_view<T>(a) * matrix_view<T>(b));
}

Array matmul(DType dtype, const Array& a, const Array& b) {
  return dtype == DType::kFloat64 ? local_matmul<double>(a, b) : local_matmul<float>(a, b);
}

// Float64 small integers in [-5, 5], or uniform reals in [-1, 1].
Array random_matrix(int64_t rows, int64_t cols, bool integers, std::mt19937& rng) {
  Array out = Array::empty({rows, cols}, DType::kFloat64);
  std::uniform_real_distribution<double> real(-1, 1);
  for (double& v : out.mutable_span<double>()) {
    v = integers ? static_cast<int>(rng() % 11) - 5 : real(rng);
  }
  return out;
}

class ShardedMatmulTest
    : public ::testing::TestWithParam<std::tuple<MeshAxes, DType, Operands>> {};

TEST_P(ShardedMatmulTest, MatchesEigenProductOfGlobalMatrices) {
  const auto& [axes, dtype, operands] = GetParam();
  const Mesh mesh = Mesh::make(axes);
  const int64_t y = mesh.abstract_mesh().axis_size("y");
  Array a, b;
  if (operands == Operands::kJaxArange) {
    a = Array::iota({8, 16}, dtype);
    b = Array::iota({16, 4}, dtype);
  } else {
    std::mt19937 rng(42);
    const bool integers = dtype == DType::kFloat64;
    a = random_matrix(8, 3 * y, integers, rng).astype(dtype);
    b = random_matrix(3 * y, 5, integers, rng).astype(dtype);
  }

  Runtime rt(mesh.size());
  const std::vector<Array> inputs = {a, b};
  const std::vector<PartitionSpec> in_specs = {P{"x", "y"}, P{"y", nullptr}};
  const std::vector<PartitionSpec> out_specs = {P{"x", nullptr}};
  const auto out = shard_map(
      rt, mesh,
      [&, dtype = dtype](DeviceContext& ctx, std::span<const Array> blocks) {
        return std::vector<Array>{psum(ctx, matmul(dtype, blocks[0], blocks[1]), "y")};
      },
      in_specs, out_specs, inputs);
  ASSERT_EQ(out.size(), 1u);

  const Array expected = matmul(dtype, a, b);
  if (dtype == DType::kFloat64) {
    EXPECT_TRUE(array_equal(out[0], expected)) << first_difference(out[0], expected);
  } else {
    EXPECT_TRUE(allclose(out[0], expected, 1e-5, 1e-5)) << out[0] << "\nvs\n" << expected;
  }
}

std::string matmul_name(
    const ::testing::TestParamInfo<std::tuple<MeshAxes, DType, Operands>>& info) {
  const auto& [axes, dtype, operands] = info.param;
  std::string name;
  for (const auto& [axis, size] : axes) name += axis + std::to_string(size);
  return name + "_" + std::string(dtype_name(dtype)) +
         (operands == Operands::kJaxArange ? "_JaxArange" : "_Random");
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, ShardedMatmulTest,
    ::testing::Combine(::testing::Values(MeshAxes{{"x", 4}, {"y", 2}}, MeshAxes{{"x", 2}, {"y", 4}},
                                         MeshAxes{{"x", 8}, {"y", 1}}, MeshAxes{{"x", 1}, {"y", 8}},
                                         // z is in no spec: the result must be replicated over it
                                         MeshAxes{{"x", 2}, {"y", 2}, {"z", 2}}),
                       ::testing::Values(DType::kFloat64, DType::kFloat32),
                       ::testing::Values(Operands::kRandom, Operands::kJaxArange)),
    matmul_name);

}  // namespace
}  // namespace meshsim::sharded_matmul_test
