// meshsim_demo: three sharded computations on an 8-device mesh (data=4,
// model=2), each checked against the same computation done sequentially on the
// global arrays. Prints one OK / FAIL line per check and exits 1 on any FAIL.
//
// Inputs are small integers in float64, so every sum is exact and a check
// can demand bitwise equality (array_equal) rather than closeness.

#include <cstdio>
#include <span>
#include <vector>

#include <meshsim/meshsim.h>

namespace meshsim {
namespace {

// C = A·B. A's rows are split over "data" and its columns (the contraction)
// over "model"; B's rows over "model". Each device multiplies its two blocks;
// psum over "model" adds the partial products. C comes back split over "data"
// and replicated over "model", which shard_map checks bitwise.
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

// The column means of a batch whose rows are split over "data": every device
// takes the mean of its rows, psum adds the shard means, and dividing by
// axis_size("data") gives the global mean (shards are equal in size).
Array sharded_mean(Runtime& rt, const Mesh& mesh, const Array& batch) {
  auto body = [](DeviceContext& ctx, const Array& rows) {
    const Array local_mean = from_eigen(matrix_view<double>(rows).colwise().mean());
    Array total = psum(ctx, local_mean, "data");
    mutable_vector_view<double>(total) /= ctx.axis_size("data");
    return total;
  };
  return shard_map(rt, mesh, body, P{"data"}, P{}, batch);
}

// jax.pmap(lambda x: jax.lax.axis_index("i"), axis_name="i")(jnp.zeros(n)).
Array pmap_axis_index(Runtime& rt, int n) {
  const Array inputs[] = {Array::zeros({n}, DType::kFloat32)};
  auto body = [](DeviceContext& ctx, std::span<const Array>) {
    return std::vector<Array>{Array::scalar<int32_t>(ctx.axis_index("i"))};
  };
  return pmap(rt, body, "i", inputs)[0];
}

// A (rows, cols) float64 matrix of small integers in [-4, 4].
Array small_integers(int64_t rows, int64_t cols, int seed) {
  Array m = Array::empty({rows, cols}, DType::kFloat64);
  auto values = m.mutable_span<double>();
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>((i * 7 + seed) % 9) - 4;
  return m;
}

bool check(const char* what, const Array& got, const Array& want) {
  const bool ok = array_equal(got, want);
  std::printf("%-4s %s\n", ok ? "OK" : "FAIL", what);
  if (!ok) std::printf("     %s\n", first_difference(got, want).c_str());
  return ok;
}

int run() {
  Runtime rt(8);
  const Mesh mesh = Mesh::make({{"data", 4}, {"model", 2}});
  std::printf("%s on %d device threads\n", mesh.to_string().c_str(), rt.num_devices());

  const Array a = small_integers(16, 12, 1), b = small_integers(12, 5, 2);
  const Array c = sharded_matmul(rt, mesh, a, b);
  bool ok = check("sharded matmul (16x12)·(12x5): psum over 'model' equals Eigen's A·B", c,
                  from_eigen(matrix_view<double>(a) * matrix_view<double>(b)));

  const Array batch = small_integers(32, 3, 3);
  ok &= check("mean over a batch of 32 split over 'data': psum / axis_size equals the global mean",
              sharded_mean(rt, mesh, batch),
              from_eigen(matrix_view<double>(batch).colwise().mean()));

  ok &= check("pmap over 8 devices: axis_index('i') gives [0 1 ... 7]", pmap_axis_index(rt, 8),
              Array::iota({8}, DType::kInt32));

  std::printf("%s\n", ok ? "all checks passed" : "SOME CHECKS FAILED");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace meshsim

int main() {
  try {
    return meshsim::run();
  } catch (const meshsim::Error& e) {
    std::fprintf(stderr, "meshsim error: %s\n", e.what());
    return 1;
  }
}
