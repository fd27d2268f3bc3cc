// The ragged_all_to_all algorithms, each forced through ragged_all_to_all's
// `algorithm` argument: the JAX docstring example, random layouts whose
// landings overlap (sender rank order decides, as direct) against a
// sequential reference, zero-size slices, recv_sizes that disagree with the
// senders, an unknown name, and 64 devices for the sanitizer builds. The
// randomized non-overlapping layouts over meshes and dtypes run every
// algorithm in ../ragged_all_to_all_test.cc.

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "collectives/algorithms/builtin_algorithm_cases.h"
#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::ragged_all_to_all_algorithms_test {
namespace {

// Every ragged_all_to_all algorithm but direct, as the runtime lists them.
std::vector<std::string> algorithms() {
  Runtime rt(1);
  std::vector<std::string> names;
  for (const AlgorithmInfo* info : algorithm_registry(rt).list(Collective::kRaggedAllToAll)) {
    if (info->name != "direct") names.push_back(info->name);
  }
  return names;
}

Array i32(const std::vector<int64_t>& values) {
  return Array::from_values<int64_t>({static_cast<int64_t>(values.size())}, values)
      .astype(DType::kInt32);
}

// One member's arguments (int32 operand of `rows` rows of one element).
struct Member {
  std::vector<int64_t> operand, output, input_offsets, send_sizes, output_offsets, recv_sizes;
};

// Runs ragged_all_to_all on a 1-D mesh of members.size() devices; returns
// each device's result and what its record says ran.
std::pair<std::vector<Array>, std::vector<std::string>> run(const std::vector<Member>& members,
                                                            const std::string& algorithm) {
  const int n = static_cast<int>(members.size());
  std::vector<Array> results(n);
  std::vector<std::string> records(n);
  Runtime rt(n);
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    const Member& m = members[ctx.position()];
    results[ctx.position()] =
        ragged_all_to_all(ctx, i32(m.operand), i32(m.output), i32(m.input_offsets),
                          i32(m.send_sizes), i32(m.output_offsets), i32(m.recv_sizes), "x", {},
                          algorithm);
    records[ctx.position()] = algorithm_cases::last_record(ctx);
  });
  return {results, records};
}

// The docstring's semantics applied sequentially: member r's result is its
// output with, for s = 0..n-1 and t = 0..spd-1, sender s's slice t for r
// written where s places it (later writes win).
std::vector<int64_t> reference(const std::vector<Member>& members, int r) {
  const int n = static_cast<int>(members.size());
  const int64_t spd = static_cast<int64_t>(members[0].send_sizes.size()) / n;
  std::vector<int64_t> out = members[r].output;
  for (int s = 0; s < n; ++s) {
    const Member& from = members[s];
    for (int64_t t = 0; t < spd; ++t) {
      const int64_t e = r * spd + t;
      for (int64_t row = 0; row < from.send_sizes[e]; ++row) {
        out[from.output_offsets[e] + row] = from.operand[from.input_offsets[e] + row];
      }
    }
  }
  return out;
}

// n members, spd slices per peer of 0..3 rows from anywhere in the operand,
// landing anywhere in the output: landings overlap, within a sender and
// across senders.
std::vector<Member> overlapping_layout(int n, int64_t spd, unsigned seed) {
  constexpr int64_t kRows = 12;
  std::mt19937 rng(seed);
  std::vector<Member> members(n);
  for (int p = 0; p < n; ++p) {
    Member& m = members[p];
    for (int64_t row = 0; row < kRows; ++row) {
      m.operand.push_back(100 * (p + 1) + row);
      m.output.push_back(-(100 * (p + 1) + row));
    }
    for (int64_t e = 0; e < n * spd; ++e) {
      const int64_t size = rng() % 4;
      m.send_sizes.push_back(size);
      m.input_offsets.push_back(rng() % (kRows - size + 1));
      m.output_offsets.push_back(rng() % (kRows - size + 1));
    }
  }
  for (int r = 0; r < n; ++r) {
    for (int s = 0; s < n; ++s) {
      for (int64_t t = 0; t < spd; ++t) {
        members[r].recv_sizes.push_back(members[s].send_sizes[r * spd + t]);
      }
    }
  }
  return members;
}

TEST(RaggedAllToAllAlgorithmTest, BuiltinsAreRegistered) {
  EXPECT_EQ(algorithms(), (std::vector<std::string>{"pairwise", "linear"}));
}

// index 0 gets [1, 3, 0, 0] and index 1 [2, 2, 4, 0] whatever the algorithm.
TEST(RaggedAllToAllAlgorithmTest, JaxDocstringExample) {
  const std::vector<Member> members = {
      {{1, 2, 2}, {0, 0, 0, 0}, {0, 1}, {1, 2}, {0, 0}, {1, 1}},
      {{3, 4, 0}, {0, 0, 0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 1}},
  };
  for (const std::string& algorithm : algorithms()) {
    const auto [results, records] = run(members, algorithm);
    EXPECT_TRUE(array_equal(results[0], i32({1, 3, 0, 0}))) << algorithm;
    EXPECT_TRUE(array_equal(results[1], i32({2, 2, 4, 0}))) << algorithm;
    for (const std::string& record : records) {
      EXPECT_EQ(record, "ragged_all_to_all/" + algorithm + "/2");
    }
  }
}

TEST(RaggedAllToAllAlgorithmTest, OverlappingLandingsFollowSenderOrder) {
  for (const std::string& algorithm : algorithms()) {
    for (int n : {1, 2, 3, 5, 8}) {
      for (int64_t spd : {1, 3}) {
        const std::vector<Member> members = overlapping_layout(n, spd, 7 * n + spd);
        const auto results = run(members, algorithm).first;
        for (int r = 0; r < n; ++r) {
          const Array expected = i32(reference(members, r));
          EXPECT_TRUE(array_equal(results[r], expected))
              << algorithm << " n=" << n << " spd=" << spd << " device " << r << ": "
              << first_difference(results[r], expected);
        }
      }
    }
  }
}

// Every slice empty: nothing moves, every result is its output.
TEST(RaggedAllToAllAlgorithmTest, EmptySlicesLeaveTheOutput) {
  const std::vector<Member> members = {
      {{1, 2}, {7, 8}, {0, 2}, {0, 0}, {2, 0}, {0, 0}},
      {{3, 4}, {9, 6}, {2, 0}, {0, 0}, {0, 2}, {0, 0}},
  };
  for (const std::string& algorithm : algorithms()) {
    const auto results = run(members, algorithm).first;
    EXPECT_TRUE(array_equal(results[0], i32({7, 8}))) << algorithm;
    EXPECT_TRUE(array_equal(results[1], i32({9, 6}))) << algorithm;
  }
}

// Device 1 expects 5 rows from device 0's entry 1, which sends 2: the
// receiver names both entries, after every transfer is done.
TEST(RaggedAllToAllAlgorithmTest, DisagreeingRecvSizesNameBothEntries) {
  const std::vector<Member> members = {
      {{1, 2, 2}, {0, 0, 0, 0}, {0, 1}, {1, 2}, {0, 0}, {1, 1}},
      {{3, 4, 0}, {0, 0, 0, 0}, {0, 1}, {1, 1}, {1, 2}, {5, 1}},
  };
  for (const std::string& algorithm : algorithms()) {
    EXPECT_ERROR(run(members, algorithm), InvalidArgumentError,
                 "recv_sizes[0] = 5 on peer 1 (device 1) but peer 0 (device 0) sends it "
                 "send_sizes[1] = 2");
  }
}

TEST(RaggedAllToAllAlgorithmTest, UnknownNameListsTheValidOnes) {
  const std::vector<Member> members = {{{1}, {0}, {0}, {1}, {0}, {1}}};
  EXPECT_ERROR(run(members, "bruck"), UnknownAlgorithmError,
               "direct, pairwise, linear, auto");
}

class RaggedAllToAllAlgorithm64Test : public ::testing::TestWithParam<std::string> {};

TEST_P(RaggedAllToAllAlgorithm64Test, MatchesReference) {
  const std::vector<Member> members = overlapping_layout(64, 1, 64);
  const auto results = run(members, GetParam()).first;
  for (int r = 0; r < 64; ++r) {
    const Array expected = i32(reference(members, r));
    EXPECT_TRUE(array_equal(results[r], expected))
        << "device " << r << ": " << first_difference(results[r], expected);
  }
}

INSTANTIATE_TEST_SUITE_P(Builtin, RaggedAllToAllAlgorithm64Test,
                         ::testing::Values("pairwise", "linear"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace meshsim::ragged_all_to_all_algorithms_test
