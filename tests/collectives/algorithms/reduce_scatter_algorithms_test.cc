// The built-in reduce_scatter algorithms, each forced through psum_scatter's
// `algorithm` option, against the sequential reference: group sizes 1, 2, 3,
// 5, 8, zero, one and odd block sizes, and the record of what ran. Inputs
// carry a distinct bit per device, so a missing or doubled contribution shows
// in every sum. 64 devices for each, for the sanitizer builds.

#include <gtest/gtest.h>

#include "collectives/algorithms/builtin_algorithm_cases.h"
#include "meshsim/meshsim.h"
#include "support/reference_collectives.h"

namespace meshsim::reduce_scatter_algorithms_test {
namespace {

using algorithm_cases::Case;

const std::vector<std::string> kAlgorithms = {"ring", "recursive_halving", "pairwise"};

// Element j of device p's input: bit p (p < 8) plus 256·j, exact in every
// dtype used here and in any summation order.
Array input(int device, int64_t count, DType dtype) {
  Array a = Array::empty({count}, DType::kInt64);
  int64_t j = 0;
  for (int64_t& v : a.mutable_span<int64_t>()) v = (int64_t{1} << (device % 8)) + 256 * j++;
  return a.astype(dtype);
}

// Runs psum_scatter (tiled, blocks of c.count) and checks every device.
void check(const Case& c) {
  Runtime rt(c.group_size);
  const int n = c.group_size;
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) inputs.push_back(input(p, n * c.count, c.dtype));
  std::vector<Array> outputs(n);
  std::vector<std::string> records(n);
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    outputs[p] = psum_scatter(ctx, inputs[p], "x",
                              PsumScatterOptions{.tiled = true, .algorithm = c.algorithm});
    records[p] = algorithm_cases::last_record(ctx);
  });
  std::vector<reference::HostArray> host;
  for (const Array& a : inputs) host.push_back(reference::to_host(a));
  reference::Members members;
  for (const auto& h : host) members.push_back(&h);
  for (int p = 0; p < n; ++p) {
    EXPECT_EQ(reference::difference(reference::psum_scatter(members, p, 0, true), outputs[p]), "")
        << "device " << p;
    EXPECT_EQ(records[p], "psum_scatter/" + c.algorithm + "/" + std::to_string(n))
        << "device " << p;
  }
}

class ReduceScatterAlgorithmTest : public ::testing::TestWithParam<Case> {};

TEST_P(ReduceScatterAlgorithmTest, MatchesReference) { check(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Builtin, ReduceScatterAlgorithmTest,
                         ::testing::ValuesIn(algorithm_cases::cases(kAlgorithms,
                                                                    {{0, DType::kInt32},
                                                                     {1, DType::kInt32},
                                                                     {3, DType::kInt64},
                                                                     {5, DType::kFloat32}})),
                         algorithm_cases::case_name);

class ReduceScatterAlgorithm64Test : public ::testing::TestWithParam<std::string> {};

TEST_P(ReduceScatterAlgorithm64Test, MatchesReference) {
  check({GetParam(), 64, 3, DType::kFloat32});
}

INSTANTIATE_TEST_SUITE_P(Builtin, ReduceScatterAlgorithm64Test, ::testing::ValuesIn(kAlgorithms),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace meshsim::reduce_scatter_algorithms_test
