// The built-in all_to_all algorithms, each forced through all_to_all's
// `algorithm` option, against the sequential reference: group sizes 1, 2, 3,
// 5, 8, zero, one and odd block sizes, tiled and stacked, and the record of
// what ran. 64 devices for each, for the sanitizer builds.

#include <gtest/gtest.h>

#include "collectives/algorithms/builtin_algorithm_cases.h"
#include "meshsim/meshsim.h"
#include "support/reference_collectives.h"

namespace meshsim::all_to_all_algorithms_test {
namespace {

using algorithm_cases::Case;

const std::vector<std::string> kAlgorithms = {"pairwise", "bruck", "linear"};

// Runs all_to_all tiled (x of n·count elements) and stacked (x of shape
// [n, count], split 0, concat 1) and checks every device's results and record.
void check(const Case& c) {
  Runtime rt(c.group_size);
  const int n = c.group_size;
  std::vector<Array> tiled_in, stacked_in;
  for (int p = 0; p < n; ++p) {
    tiled_in.push_back(algorithm_cases::input(p, n * c.count, c.dtype));
    stacked_in.push_back(tiled_in.back().reshape({n, c.count}));
  }
  std::vector<Array> tiled(n), stacked(n);
  std::vector<std::string> records(n);
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    tiled[p] = all_to_all(ctx, tiled_in[p], "x", 0, 0,
                          AllToAllOptions{.tiled = true, .algorithm = c.algorithm});
    stacked[p] =
        all_to_all(ctx, stacked_in[p], "x", 0, 1, AllToAllOptions{.algorithm = c.algorithm});
    records[p] = algorithm_cases::last_record(ctx);
  });
  std::vector<reference::HostArray> host_tiled, host_stacked;
  for (int p = 0; p < n; ++p) {
    host_tiled.push_back(reference::to_host(tiled_in[p]));
    host_stacked.push_back(reference::to_host(stacked_in[p]));
  }
  reference::Members members_tiled, members_stacked;
  for (int p = 0; p < n; ++p) {
    members_tiled.push_back(&host_tiled[p]);
    members_stacked.push_back(&host_stacked[p]);
  }
  for (int p = 0; p < n; ++p) {
    EXPECT_EQ(reference::difference(reference::all_to_all(members_tiled, p, 0, 0, true), tiled[p]),
              "")
        << "device " << p;
    EXPECT_EQ(
        reference::difference(reference::all_to_all(members_stacked, p, 0, 1, false), stacked[p]),
        "")
        << "device " << p;
    EXPECT_EQ(records[p], "all_to_all/" + c.algorithm + "/" + std::to_string(n)) << "device " << p;
  }
}

class AllToAllAlgorithmTest : public ::testing::TestWithParam<Case> {};

TEST_P(AllToAllAlgorithmTest, MatchesReference) { check(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Builtin, AllToAllAlgorithmTest,
                         ::testing::ValuesIn(algorithm_cases::cases(kAlgorithms)),
                         algorithm_cases::case_name);

// pswapaxes runs on the all_to_all algorithms: x of shape [n, count] swaps
// its dimension 0 with the group, out[s] = rank s's x[my rank].
TEST(PswapaxesAlgorithmTest, EachAlgorithmMatchesTheReference) {
  constexpr int n = 5;
  constexpr int64_t count = 3;
  for (const std::string& algorithm : kAlgorithms) {
    Runtime rt(n);
    std::vector<Array> in, out(n);
    for (int p = 0; p < n; ++p) {
      in.push_back(algorithm_cases::input(p, n * count, DType::kInt32).reshape({n, count}));
    }
    std::vector<std::string> records(n);
    rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
      const int p = ctx.position();
      out[p] = pswapaxes(ctx, in[p], "x", 0, {}, algorithm);
      records[p] = algorithm_cases::last_record(ctx);
    });
    for (int p = 0; p < n; ++p) {
      for (int s = 0; s < n; ++s) {
        for (int64_t i = 0; i < count; ++i) {
          EXPECT_EQ(out[p].at<int32_t>({s, i}), in[s].at<int32_t>({p, i}))
              << algorithm << ": device " << p << " block " << s << " element " << i;
        }
      }
      EXPECT_EQ(records[p], "pswapaxes/" + algorithm + "/" + std::to_string(n)) << "device " << p;
    }
  }
}

class AllToAllAlgorithm64Test : public ::testing::TestWithParam<std::string> {};

TEST_P(AllToAllAlgorithm64Test, MatchesReference) { check({GetParam(), 64, 3, DType::kInt32}); }

INSTANTIATE_TEST_SUITE_P(Builtin, AllToAllAlgorithm64Test, ::testing::ValuesIn(kAlgorithms),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace meshsim::all_to_all_algorithms_test
