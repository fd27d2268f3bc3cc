// The built-in broadcast algorithms, each forced through pbroadcast's
// `algorithm` argument, against the source's input: group sizes 1, 2, 3, 5, 8,
// sources first, middle and last, zero, one, odd (not divisible by the group)
// and divisible byte counts, many pipeline segments, and the record of what
// ran. 64 devices for each, for the sanitizer builds.

#include <gtest/gtest.h>

#include "collectives/algorithms/builtin_algorithm_cases.h"
#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"

namespace meshsim::broadcast_algorithms_test {
namespace {

using algorithm_cases::Case;

const std::vector<std::string> kAlgorithms = {"binomial_tree", "scatter_allgather"};

// Broadcasts from the first, a middle and the last member of a 1-D mesh of
// c.group_size devices on `rt`, checking every device's result and record.
void check(Runtime& rt, const Case& c) {
  const int n = c.group_size;
  std::vector<Array> inputs;
  for (int p = 0; p < n; ++p) inputs.push_back(algorithm_cases::input(p, c.count, c.dtype));
  for (const int source : {0, n / 2, n - 1}) {
    std::vector<Array> outputs(n);
    std::vector<std::string> records(n);
    rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
      const int p = ctx.position();
      outputs[p] = pbroadcast(ctx, inputs[p], "x", source, c.algorithm);
      records[p] = algorithm_cases::last_record(ctx);
    });
    for (int p = 0; p < n; ++p) {
      EXPECT_TRUE(array_equal(outputs[p], inputs[source]))
          << "source " << source << ", device " << p << ": " << outputs[p];
      EXPECT_EQ(records[p], "pbroadcast/" + c.algorithm + "/" + std::to_string(n))
          << "source " << source << ", device " << p;
    }
  }
}

class BroadcastAlgorithmTest : public ::testing::TestWithParam<Case> {};

TEST_P(BroadcastAlgorithmTest, EveryMemberGetsTheSourceInput) {
  Runtime rt(GetParam().group_size);
  check(rt, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Builtin, BroadcastAlgorithmTest,
                         ::testing::ValuesIn(algorithm_cases::cases(kAlgorithms,
                                                                    {{0, DType::kInt32},
                                                                     {1, DType::kInt32},
                                                                     {13, DType::kUInt8},
                                                                     {40, DType::kUInt8}})),
                         algorithm_cases::case_name);

class BroadcastAlgorithm64Test : public ::testing::TestWithParam<std::string> {};

TEST_P(BroadcastAlgorithm64Test, EveryMemberGetsTheSourceInput) {
  Runtime rt(64);
  check(rt, {GetParam(), 64, 203, DType::kUInt8});
}

INSTANTIATE_TEST_SUITE_P(Builtin, BroadcastAlgorithm64Test, ::testing::ValuesIn(kAlgorithms),
                         [](const auto& info) { return info.param; });

// With 64-byte segments a 1000-byte message takes 16 pipeline steps, the last
// one short, more than a link's ring of descriptors holds, and inner tree
// members forward while they still receive.
TEST(BroadcastBinomialTreeTest, PipelinesInSegments) {
  Runtime rt(8);
  algorithm_registry(rt).set_tunable(Collective::kBroadcast, "binomial_tree", "segment_bytes", 64);
  for (const int n : {3, 8}) check(rt, {"binomial_tree", n, 1000, DType::kUInt8});
}

}  // namespace
}  // namespace meshsim::broadcast_algorithms_test
