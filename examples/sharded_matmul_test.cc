// How to unit-test a sharded algorithm with meshsim: run it on a simulated
// mesh and compare the gathered result with the same math done sequentially
// on the global arrays. Copy this file and replace the algorithm.
//
// The algorithm here: C = A·B with A's rows split over "data" and its columns
// (the contraction) over "model", B's rows over "model"; every device
// multiplies its blocks and psum over "model" adds the partial products.

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <ostream>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <meshsim/meshsim.h>

namespace meshsim::sharded_matmul_test {
namespace {

// The algorithm under test.
Array sharded_matmul(Runtime& rt, const Mesh& mesh, const Array& a, const Array& b) {
  const Array inputs[] = {a, b};
  const PartitionSpec in_specs[] = {P{"data", "model"}, P{"model"}};
  const PartitionSpec out_specs[] = {P{"data"}};
  auto body = [](DeviceContext& ctx, std::span<const Array> x) {
    const Array partial = from_eigen(matrix_view<double>(x[0]) * matrix_view<double>(x[1]));
    return std::vector<Array>{psum(ctx, partial, "model")};
  };
  return shard_map(rt, mesh, body, in_specs, out_specs, inputs)[0];
}

struct MeshShape {
  int data;
  int model;
};
struct MatmulSize {
  int m, k, n;  // A is (m, k), B is (k, n)
};
// For readable failure messages.
std::ostream& operator<<(std::ostream& os, const MeshShape& s) {
  return os << "data=" << s.data << ", model=" << s.model;
}
std::ostream& operator<<(std::ostream& os, const MatmulSize& s) {
  return os << "(" << s.m << ", " << s.k << ") x (" << s.k << ", " << s.n << ")";
}

// Small integers in float64: every product and sum is exact, whatever the
// order, so the sharded result must equal the sequential one bit for bit.
Eigen::MatrixXd small_integers(int rows, int cols, std::mt19937& rng) {
  Eigen::MatrixXd m(rows, cols);
  for (double& v : m.reshaped()) v = static_cast<int>(rng() % 17) - 8;
  return m;
}

class ShardedMatmulTest : public ::testing::TestWithParam<std::tuple<MeshShape, MatmulSize>> {};

TEST_P(ShardedMatmulTest, EqualsEigenProductOfGlobalMatrices) {
  const auto& [shape, size] = GetParam();
  Runtime rt(shape.data * shape.model);
  const Mesh mesh = Mesh::make({{"data", shape.data}, {"model", shape.model}});
  std::mt19937 rng(size.m * 1000 + size.k * 10 + size.n);
  const Eigen::MatrixXd a = small_integers(size.m, size.k, rng);
  const Eigen::MatrixXd b = small_integers(size.k, size.n, rng);

  const Array c = sharded_matmul(rt, mesh, from_eigen(a), from_eigen(b));

  const Array expected = from_eigen(Eigen::MatrixXd(a * b));
  EXPECT_TRUE(array_equal(c, expected)) << mesh << ": " << first_difference(c, expected);
}

std::string case_name(
    const ::testing::TestParamInfo<std::tuple<MeshShape, MatmulSize>>& info) {
  const auto& [shape, size] = info.param;
  return "data" + std::to_string(shape.data) + "_model" + std::to_string(shape.model) + "_" +
         std::to_string(size.m) + "x" + std::to_string(size.k) + "x" + std::to_string(size.n);
}

// Every dimension that is split must divide by its axis size: m by data, k by model.
INSTANTIATE_TEST_SUITE_P(
    Meshes, ShardedMatmulTest,
    ::testing::Combine(::testing::Values(MeshShape{4, 2}, MeshShape{2, 4}, MeshShape{8, 1},
                                         MeshShape{1, 8}),
                       ::testing::Values(MatmulSize{8, 8, 8}, MatmulSize{16, 24, 5},
                                         MatmulSize{24, 40, 1})),
    case_name);

}  // namespace
}  // namespace meshsim::sharded_matmul_test
