// The built-in all_gather algorithms, each forced through all_gather's
// `algorithm` option, against the sequential reference: group sizes 1, 2, 3,
// 5, 8 (neighbor exchange: 1 and even), zero, one and odd byte counts, and the
// record of what ran. 64 devices for each, for the sanitizer builds.

#include <gtest/gtest.h>

#include "collectives/algorithms/builtin_algorithm_cases.h"
#include "meshsim/meshsim.h"
#include "support/expect_error.h"
#include "support/reference_collectives.h"

namespace meshsim::all_gather_algorithms_test {
namespace {

using algorithm_cases::Case;

const std::vector<std::string> kAlgorithms = {"ring", "recursive_doubling", "bruck",
                                              "neighbor_exchange"};

bool allowed(const std::string& algorithm, int n) {
  return algorithm != "neighbor_exchange" || n == 1 || n % 2 == 0;
}

// Runs all_gather (stacked and tiled) with `c`'s algorithm on a 1-D mesh and
// checks every device's results and record.
void check(const Case& c) {
  Runtime rt(c.group_size);
  const int n = c.group_size;
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) inputs.push_back(algorithm_cases::input(p, c.count, c.dtype));
  std::vector<Array> stacked(n), tiled(n);
  std::vector<std::string> records(n);
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    stacked[p] = all_gather(ctx, inputs[p], "x", AllGatherOptions{.algorithm = c.algorithm});
    tiled[p] =
        all_gather(ctx, inputs[p], "x", AllGatherOptions{.tiled = true, .algorithm = c.algorithm});
    records[p] = algorithm_cases::last_record(ctx);
  });
  std::vector<reference::HostArray> host;
  for (const Array& a : inputs) host.push_back(reference::to_host(a));
  reference::Members members;
  for (const auto& h : host) members.push_back(&h);
  const auto want_stacked = reference::all_gather(members, 0, false);
  const auto want_tiled = reference::all_gather(members, 0, true);
  for (int p = 0; p < n; ++p) {
    EXPECT_EQ(reference::difference(want_stacked, stacked[p]), "") << "device " << p;
    EXPECT_EQ(reference::difference(want_tiled, tiled[p]), "") << "device " << p;
    EXPECT_EQ(records[p], "all_gather/" + c.algorithm + "/" + std::to_string(n)) << "device " << p;
  }
}

class AllGatherAlgorithmTest : public ::testing::TestWithParam<Case> {};

TEST_P(AllGatherAlgorithmTest, MatchesReference) { check(GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Builtin, AllGatherAlgorithmTest,
    ::testing::ValuesIn(algorithm_cases::cases(kAlgorithms, algorithm_cases::kSizes, allowed)),
    algorithm_cases::case_name);

class AllGatherAlgorithm64Test : public ::testing::TestWithParam<std::string> {};

TEST_P(AllGatherAlgorithm64Test, MatchesReference) { check({GetParam(), 64, 5, DType::kFloat32}); }

INSTANTIATE_TEST_SUITE_P(Builtin, AllGatherAlgorithm64Test, ::testing::ValuesIn(kAlgorithms),
                         [](const auto& info) { return info.param; });

// An odd group is neighbor exchange's unmet precondition, named on the call.
TEST(AllGatherAlgorithmPreconditionTest, NeighborExchangeNeedsAnEvenGroup) {
  Runtime rt(3);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 3}}),
                         [](DeviceContext& ctx) {
                           all_gather(ctx, Array::zeros({2}, DType::kInt32), "x",
                                      AllGatherOptions{.algorithm = "neighbor_exchange"});
                         }),
               AlgorithmPreconditionError, "group size is 3");
}

}  // namespace
}  // namespace meshsim::all_gather_algorithms_test
