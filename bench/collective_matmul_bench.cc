// The seed's bidirectional all-gather collective matmul (examples/
// collective_matmul.h, remote DMAs and semaphores in a kernel) against what
// it replaces, all_gather + a local matmul, on 8 devices in one ring; and
// the cost of race detection on the kernel.
// - BM_CollectiveMatmul/devices/n/k_shard/m: one launch per iteration, every
//   device computing its (n, m) float32 block from its (n, k_shard) bfloat16
//   lhs shard and the (devices * k_shard, m) bfloat16 rhs.
// - BM_AllGatherMatmul/...: the same product as all_gather (tiled, over the
//   contraction dim) followed by the local matmul, the same float32 math.
// - BM_CollectiveMatmulRaces/...: BM_CollectiveMatmul with race detection on
//   (MESHSIM_KERNEL_RACES=1 while it runs).
// Wall time per launch (real time; the devices' threads do the work). Read
// the rows against each other from one run: the machine is shared.
// modeled_us: one more launch with virtual time, on a TPU-like machine (a
// bidirectional ring of 50 GB/s links with 1 us latency, transfers sharing
// a link share its bandwidth; 200 TFLOP/s and 1 TB/s of memory per
// device): the modeled duration, in which the kernel's DMAs overlap its
// products and all_gather's transfers precede the matmul.
//
// Run: meshsim_bench_collective_matmul --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

#include <benchmark/benchmark.h>

#include <Eigen/Core>

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "examples/collective_matmul.h"
#include "meshsim/meshsim.h"

namespace meshsim {
namespace {

struct Problem {
  int devices, n, k_shard, m;
};

Problem problem_of(const benchmark::State& state) {
  return {static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
          static_cast<int>(state.range(2)), static_cast<int>(state.range(3))};
}

// Small integers in bfloat16, so every row's result is exact (and equal
// between the two ways).
Array small_integers(Shape shape, int salt) {
  Array a = Array::empty(shape, DType::kBFloat16);
  auto v = a.mutable_span<Eigen::bfloat16>();
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = Eigen::bfloat16(static_cast<float>(static_cast<int>((i * 7 + salt) % 9) - 4));
  }
  return a;
}

// Each device's lhs shard and the rhs every device holds.
struct Inputs {
  explicit Inputs(const Problem& p) : rhs(small_integers({p.k_shard * p.devices, p.m}, 99)) {
    for (int d = 0; d < p.devices; ++d) lhs.push_back(small_integers({p.n, p.k_shard}, d));
  }
  std::vector<Array> lhs;
  Array rhs;
};

std::shared_ptr<const VirtualTime> tpu_like_ring(int devices) {
  auto time = std::make_shared<VirtualTime>();
  time->network = std::make_shared<CongestionAwareModel>(
      Topology({{DimensionKind::bidirectional_ring, devices, 50e9, 1e-6}}));
  time->device = DeviceSpec{200e12, 1e12};
  return time;
}

// Runs `body` once more with virtual time; the modeled duration in us.
double modeled_us(Runtime& rt, const Mesh& mesh, const std::function<void(DeviceContext&)>& body) {
  LaunchRecord record;
  rt.launch(mesh, body, {.time = tpu_like_ring(mesh.size()), .record = &record});
  return record.makespan() * 1e6;
}

void set_counters(benchmark::State& state, const Problem& p) {
  // 2 n k m flops per device, every device.
  const double flops = 2.0 * p.n * p.k_shard * p.devices * p.m * p.devices;
  state.counters["flops"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

void run_collective_matmul(benchmark::State& state) {
  const Problem p = problem_of(state);
  Runtime rt(p.devices);
  const Mesh mesh = Mesh::make({{"x", p.devices}});
  const Inputs in(p);
  std::vector<int> ring(p.devices);
  for (int d = 0; d < p.devices; ++d) ring[d] = d;
  const std::vector<std::vector<int>> rings{ring};
  auto body = [&](DeviceContext& ctx) {
    const Array out = examples::bidirectional_allgather_matmul(ctx, in.lhs[ctx.position()], in.rhs,
                                                               rings, /*collective_id=*/0);
    benchmark::DoNotOptimize(out.bytes());
  };
  for (auto _ : state) rt.launch(mesh, body);
  set_counters(state, p);
  state.counters["modeled_us"] = modeled_us(rt, mesh, body);
}

void BM_CollectiveMatmul(benchmark::State& state) { run_collective_matmul(state); }

void BM_CollectiveMatmulRaces(benchmark::State& state) {
  const char* old = std::getenv("MESHSIM_KERNEL_RACES");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  setenv("MESHSIM_KERNEL_RACES", "1", 1);
  run_collective_matmul(state);
  if (saved) {
    setenv("MESHSIM_KERNEL_RACES", saved->c_str(), 1);
  } else {
    unsetenv("MESHSIM_KERNEL_RACES");
  }
}

void BM_AllGatherMatmul(benchmark::State& state) {
  const Problem p = problem_of(state);
  Runtime rt(p.devices);
  const Mesh mesh = Mesh::make({{"x", p.devices}});
  const Inputs in(p);
  auto body = [&](DeviceContext& ctx) {
    const Array gathered =
        all_gather(ctx, in.lhs[ctx.position()], "x", AllGatherOptions{.axis = 1, .tiled = true});
    // float32 operands first, as the kernel multiplies (its rhs once, its
    // lhs shard by shard): Eigen's product is then one blocked GEMM.
    const Array rhs_f32 = in.rhs.astype(DType::kFloat32);
    const Array lhs_f32 = gathered.astype(DType::kFloat32);
    Eigen::MatrixXf out(p.n, p.m);
    out.noalias() = matrix_view<float>(lhs_f32) * matrix_view<float>(rhs_f32);
    benchmark::DoNotOptimize(out.data());
    // Virtual time: the same roofline terms as the kernel's products.
    const double n = p.n, k = static_cast<double>(p.k_shard) * p.devices, m = p.m;
    ctx.compute(2 * n * k * m, 2 * (n * k + k * m) + 8 * n * m);
  };
  for (auto _ : state) rt.launch(mesh, body);
  set_counters(state, p);
  state.counters["modeled_us"] = modeled_us(rt, mesh, body);
}

// 8 devices; (n, k_shard, m) small (latency-bound) and larger (compute-bound).
#define MATMUL_ARGS(B)                                          \
  BENCHMARK(B)                                                  \
      ->ArgNames({"devices", "n", "k_shard", "m"})              \
      ->Args({8, 64, 64, 64})                                   \
      ->Args({8, 256, 128, 256})                                \
      ->UseRealTime()                                           \
      ->Unit(benchmark::kMillisecond)

MATMUL_ARGS(BM_CollectiveMatmul);
MATMUL_ARGS(BM_AllGatherMatmul);
MATMUL_ARGS(BM_CollectiveMatmulRaces);

}  // namespace
}  // namespace meshsim
