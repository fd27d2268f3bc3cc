// How to write your own collective algorithm, register it with a runtime and
// test it against meshsim's "direct" one. Copy this file and replace the
// algorithm.
//
// The algorithm here: an all-reduce over a chain of ranks. Reduce: the last
// rank sends its input to the one before it, which adds its own and passes
// the partial result on, down to rank 0, which then holds the total.
// Broadcast: rank 0 sends the total to rank 1, which passes it on, up to the
// last rank. Words: 2(n-1) messages of S bytes on the critical path;
// cost 2(n-1)α + 2(n-1)·Sβ + (n-1)·Sγ.

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include <meshsim/collectives/algorithms/registry.h>
#include <meshsim/meshsim.h>

namespace meshsim::user_algorithm_test {
namespace {

// The algorithm: runs on every member of the group with its own arguments
// (its input, its output, the element count, dtype and reduction).
void chain_all_reduce(Communicator& comm, const AllReduceArgs& args) {
  const int rank = comm.rank();
  const int last = comm.size() - 1;
  const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
  if (args.out != args.in && bytes > 0) std::memcpy(args.out, args.in, bytes);
  // Reduce towards rank 0: out = in_rank op (partial of ranks rank+1 .. last).
  if (rank < last) comm.recv_reduce(rank + 1, args.out, args.count, args.dtype, args.op);
  if (rank > 0) comm.send(rank - 1, args.out, bytes);
  // Broadcast back up the chain. Receiving into `out` is safe: rank - 1
  // finished reading our partial before it could send the total.
  if (rank > 0) comm.recv(rank - 1, args.out, bytes);
  if (rank < last) comm.send(rank + 1, args.out, bytes);
  // No wait_sends() needed: the front-end waits for unread sends.
}

// Its registry entry: name, description, cost, preconditions, tunables.
Algorithm<AllReduceArgs> chain_algorithm() {
  Algorithm<AllReduceArgs> a;
  a.name = "chain";
  a.description = "reduce down a chain of ranks to rank 0, then pass the total back up";
  a.cost_formula = "2(n-1)α + 2(n-1)·Sβ + (n-1)·Sγ";
  a.cost = [](const CallShape& s) {
    const double steps = s.group_size - 1;
    const double bytes = static_cast<double>(s.bytes);
    return CostTerms{2 * steps, 2 * steps * bytes, steps * bytes};
  };
  a.preconditions = kNoPrecondition;  // any group size, count and op
  // Transfers move in segments of this many bytes (the fabric reads it).
  a.tunables = {{"segment_bytes", 4096, "bytes per segment of a transfer"}};
  a.run = chain_all_reduce;
  return a;
}

// psum over "x" of the rows of `global` (one row per device), with the
// algorithm `algorithm`. shard_map's replication check (out_spec P())
// verifies that every device got bitwise the same result.
Array sharded_psum(Runtime& rt, int devices, const Array& global, const std::string& algorithm) {
  return shard_map(
      rt, Mesh::make({{"x", devices}}),
      [&](DeviceContext& ctx, const Array& row) {
        const Array sum = psum(ctx, row.reshape({row.size()}), "x", {}, algorithm);
        // Which algorithm ran, as the runtime recorded it.
        EXPECT_EQ(ctx.collective_records().back().algorithm, algorithm);
        return sum;
      },
      P{"x"}, P{}, global);
}

// Small integers: every sum is exact whatever the order, so the chain's
// result must equal direct's bit for bit (for random floats, compare with a
// tolerance instead: the chain adds in another order).
Array small_integers(int rows, int64_t cols, DType dtype, std::mt19937& rng) {
  Array a = Array::empty({rows, cols}, DType::kFloat64);
  for (double& v : a.mutable_span<double>()) v = static_cast<int>(rng() % 17) - 8;
  return a.astype(dtype);
}

class ChainAllReduceTest : public ::testing::TestWithParam<std::tuple<int, int64_t, DType>> {};

TEST_P(ChainAllReduceTest, MatchesDirect) {
  const auto [devices, count, dtype] = GetParam();
  Runtime rt(devices);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(chain_algorithm());
  // Small segments: a long vector moves in many of them.
  registry.set_tunable(Collective::kAllReduce, "chain", "segment_bytes", 256);

  std::mt19937 rng(devices * 1000 + static_cast<int>(count));
  const Array global = small_integers(devices, count, dtype, rng);
  const Array chain = sharded_psum(rt, devices, global, "chain");
  const Array direct = sharded_psum(rt, devices, global, "direct");
  EXPECT_TRUE(array_equal(chain, direct)) << first_difference(chain, direct);
}

INSTANTIATE_TEST_SUITE_P(Cases, ChainAllReduceTest,
                         ::testing::Combine(::testing::Values(1, 2, 3, 5, 8),
                                            ::testing::Values(int64_t{1}, int64_t{7}, int64_t{1000}),
                                            ::testing::Values(DType::kInt32, DType::kFloat32,
                                                              DType::kFloat64)),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "devices_" +
                                  std::to_string(std::get<1>(info.param)) + "elements_" +
                                  std::string(dtype_name(std::get<2>(info.param)));
                         });

// Making it the runtime's choice for every psum without naming it per call:
// a rule (or MESHSIM_ALGO="psum:chain" in the environment).
TEST(ChainAllReduceRuleTest, RuleMakesItTheDefault) {
  Runtime rt(4);
  AlgorithmRegistry& registry = algorithm_registry(rt);
  registry.add(chain_algorithm());
  registry.add_rule({.collective = Collective::kAllReduce, .algorithm = "chain"});
  std::vector<std::string> ran(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    const Array sum = psum(ctx, Array::full({3}, DType::kInt32, ctx.axis_index("x")), "x");
    EXPECT_EQ(sum.at<int32_t>({0}), 0 + 1 + 2 + 3);
    ran[ctx.position()] = std::string(ctx.collective_records().back().algorithm);
  });
  EXPECT_EQ(ran, std::vector<std::string>(4, "chain"));
}

}  // namespace
}  // namespace meshsim::user_algorithm_test
