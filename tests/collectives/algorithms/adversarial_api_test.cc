// Adversarial use of the newest API pieces: ragged_all_to_all's `algorithm`
// argument, the asymmetric Communicator::sendrecv and the link's inline path
// from user algorithms, pswapaxes / psum_start / pbroadcast_start with an
// algorithm, and psend / precv mixed with algorithms. Every misuse must be a
// meshsim::Error naming what was wrong, never a hang (every runtime here has a
// launch timeout, so a hang fails as TimeoutError), a crash or garbage.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::adversarial_api_test {
namespace {

using namespace std::chrono_literals;

// Link::kSlots (meshsim/runtime/comm/internal/link.h, documented in
// communicator.h and send_recv.h).
constexpr size_t Link_kSlots = 8;

RuntimeOptions with_timeout() {
  RuntimeOptions options;
  options.launch_timeout = 120s;
  return options;
}

// ---------------------------------------------------------------------------
// ragged_all_to_all
// ---------------------------------------------------------------------------

const std::vector<std::string> kRaggedAlgorithms = {"direct", "pairwise", "linear", "auto", ""};

// One member's arguments: operand / output rows of `width` float32 elements,
// index arrays of `index_dtype`.
struct RaggedMember {
  int64_t operand_rows = 0, output_rows = 0, width = 1;
  std::vector<int64_t> input_offsets, send_sizes, output_offsets, recv_sizes;
};

Array index_array(const std::vector<int64_t>& v, DType dtype) {
  return Array::from_values<int64_t>({static_cast<int64_t>(v.size())}, v).astype(dtype);
}

Array operand_of(const RaggedMember& m, int device) {
  Array a = Array::empty({m.operand_rows, m.width}, DType::kFloat32);
  float v = 1000.0f * static_cast<float>(device + 1);
  for (float& x : a.mutable_span<float>()) x = v++;
  return a;
}

Array output_of(const RaggedMember& m, int device) {
  Array a = Array::empty({m.output_rows, m.width}, DType::kFloat32);
  float v = -1000.0f * static_cast<float>(device + 1);
  for (float& x : a.mutable_span<float>()) x = v--;
  return a;
}

// Random layout: n members, spd slices per peer, landings anywhere (they
// overlap), recv_sizes consistent with the senders.
std::vector<RaggedMember> random_layout(int n, int64_t spd, int64_t rows, int64_t width,
                                        unsigned seed, int64_t max_size = 4) {
  std::mt19937 rng(seed);
  std::vector<RaggedMember> members(n);
  for (RaggedMember& m : members) {
    m.operand_rows = rows;
    m.output_rows = rows;
    m.width = width;
    for (int64_t e = 0; e < n * spd; ++e) {
      const int64_t size = rows == 0 ? 0 : static_cast<int64_t>(rng() % (std::min(max_size, rows) + 1));
      m.send_sizes.push_back(size);
      m.input_offsets.push_back(static_cast<int64_t>(rng() % (rows - size + 1)));
      m.output_offsets.push_back(static_cast<int64_t>(rng() % (rows - size + 1)));
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

// Sequential reference (the header's semantics) for member r of a 1-D group.
Array ragged_reference(const std::vector<RaggedMember>& members, int r) {
  const int n = static_cast<int>(members.size());
  const int64_t spd = static_cast<int64_t>(members[0].send_sizes.size()) / n;
  Array out = output_of(members[r], r);
  auto dst = out.mutable_span<float>();
  const int64_t w = members[r].width;
  for (int s = 0; s < n; ++s) {
    const Array in = operand_of(members[s], s);
    auto src = in.span<float>();
    for (int64_t t = 0; t < spd; ++t) {
      const int64_t e = r * spd + t;
      for (int64_t row = 0; row < members[s].send_sizes[e]; ++row) {
        for (int64_t c = 0; c < w; ++c) {
          dst[(members[s].output_offsets[e] + row) * w + c] =
              src[(members[s].input_offsets[e] + row) * w + c];
        }
      }
    }
  }
  return out;
}

// Runs ragged_all_to_all on a 1-D mesh "x" of members.size() devices, member
// p choosing algorithm_of(p) and index arrays of index_dtype_of(p).
std::vector<Array> run_ragged(const std::vector<RaggedMember>& members,
                              const std::function<std::string(int)>& algorithm_of,
                              const std::function<DType(int)>& index_dtype_of =
                                  [](int) { return DType::kInt32; },
                              const std::function<void(AlgorithmRegistry&)>& configure = {}) {
  const int n = static_cast<int>(members.size());
  std::vector<Array> results(n);
  Runtime rt(n, with_timeout());
  if (configure) configure(algorithm_registry(rt));
  rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    const RaggedMember& m = members[p];
    const DType it = index_dtype_of(p);
    results[p] = ragged_all_to_all(ctx, operand_of(m, p), output_of(m, p),
                                   index_array(m.input_offsets, it), index_array(m.send_sizes, it),
                                   index_array(m.output_offsets, it),
                                   index_array(m.recv_sizes, it), "x", {}, algorithm_of(p));
  });
  return results;
}

std::vector<Array> run_ragged(const std::vector<RaggedMember>& members,
                              const std::string& algorithm) {
  return run_ragged(members, [&](int) { return algorithm; });
}

void expect_all_match_reference(const std::vector<RaggedMember>& members,
                                const std::vector<Array>& results, const std::string& what) {
  for (size_t r = 0; r < members.size(); ++r) {
    const Array expected = ragged_reference(members, static_cast<int>(r));
    EXPECT_TRUE(array_equal(results[r], expected))
        << what << " device " << r << ": " << first_difference(results[r], expected);
  }
}

void expect_same_arrays(const std::vector<Array>& got, const std::vector<Array>& want,
                        const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(array_equal(got[i], want[i])) << what << " device " << i << ": "
                                               << first_difference(got[i], want[i]);
  }
}

// Every algorithm equals direct bitwise (and the reference), over group sizes,
// slices per peer up to 200, row widths, and int32 / int64 / mixed index
// arrays (members may differ in index dtype: only the values are exchanged).
TEST(AdversarialRaggedTest, EveryAlgorithmMatchesDirectBitwise) {
  struct Case {
    int n;
    int64_t spd, rows, width;
  };
  const std::vector<Case> cases = {{1, 1, 4, 1},  {1, 5, 6, 3},   {2, 1, 5, 1},  {2, 2, 7, 2},
                                   {3, 3, 9, 5},  {4, 200, 40, 1}, {5, 2, 3, 7}, {2, 200, 8, 2}};
  for (const Case& c : cases) {
    const auto members = random_layout(c.n, c.spd, c.rows, c.width, 31 * c.n + c.spd);
    const auto direct = run_ragged(members, "direct");
    expect_all_match_reference(members, direct, "direct");
    for (const std::string& algorithm : kRaggedAlgorithms) {
      for (int dtype_mode = 0; dtype_mode < 3; ++dtype_mode) {
        const auto results = run_ragged(members, [&](int) { return algorithm; }, [&](int p) {
          return dtype_mode == 0 ? DType::kInt32
                 : dtype_mode == 1 ? DType::kInt64
                                   : (p % 2 ? DType::kInt64 : DType::kInt32);
        });
        for (int r = 0; r < c.n; ++r) {
          EXPECT_TRUE(array_equal(results[r], direct[r]))
              << "'" << algorithm << "' n=" << c.n << " spd=" << c.spd << " dtype mode "
              << dtype_mode << " device " << r << ": " << first_difference(results[r], direct[r]);
        }
      }
    }
  }
}

// Zero-width rows (shape [5, 0]): row_bytes is 0, every slice moves nothing,
// the result is the (empty) output.
void expect_zero_width_rows_work(const std::string& algorithm) {
  auto members = random_layout(3, 2, 5, 1, 99);
  for (RaggedMember& m : members) m.width = 0;
  const auto results = run_ragged(members, algorithm);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(results[r].shape(), (Shape{5, 0})) << algorithm;
}

TEST(AdversarialRaggedTest, ZeroWidthRowsDirect) {
  expect_zero_width_rows_work("direct");
  expect_zero_width_rows_work("");
}

// Zero-width rows: the operand's bytes() is null and a row is 0 bytes, so no
// copy may be made at all (memcpy of a null pointer is undefined even for 0
// bytes; UBSan flags it). Found by this suite; the guards test bytes now.
TEST(AdversarialRaggedTest, ZeroWidthRowsPairwise) { expect_zero_width_rows_work("pairwise"); }

TEST(AdversarialRaggedTest, ZeroWidthRowsLinear) { expect_zero_width_rows_work("linear"); }

TEST(AdversarialRaggedTest, ZeroWidthRowsAuto) { expect_zero_width_rows_work("auto"); }

// Zero-row operand and output: every size and offset 0.
TEST(AdversarialRaggedTest, ZeroRowOperandAndOutput) {
  const auto members = random_layout(4, 3, 0, 2, 5);
  for (const std::string& algorithm : kRaggedAlgorithms) {
    const auto results = run_ragged(members, algorithm);
    for (int r = 0; r < 4; ++r) EXPECT_EQ(results[r].shape(), (Shape{0, 2})) << algorithm;
  }
}

// Huge int64 offsets and sizes whose sums overflow int64 must be rejected by
// name, never wrap around into an in-bounds looking slice.
TEST(AdversarialRaggedTest, HugeInt64OffsetsAndSizesAreRejected) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  struct Bad {
    int64_t in, size, out;
    const char* needle;
  };
  const std::vector<Bad> bads = {
      {kMax, 1, 0, "input_offsets[1] = 9223372036854775807"},
      {1, kMax, 0, "send_sizes[1] = 9223372036854775807"},
      {0, 1, kMax, "output_offsets[1] = 9223372036854775807"},
      {kMax - 1, 2, 0, "input_offsets[1] = 9223372036854775806"},
      {0, 2, kMax - 1, "output_offsets[1] = 9223372036854775806"},
      {std::numeric_limits<int64_t>::min(), 1, 0, "is negative"},
      {0, -1, 0, "send_sizes[1] = -1 is negative"},
  };
  for (const Bad& bad : bads) {
    std::vector<RaggedMember> members(2);
    for (RaggedMember& m : members) {
      m.operand_rows = m.output_rows = 4;
      m.input_offsets = {0, 0};
      m.send_sizes = {1, 1};
      m.output_offsets = {0, 1};
      m.recv_sizes = {1, 1};
    }
    members[0].input_offsets[1] = bad.in;
    members[0].send_sizes[1] = bad.size;
    members[0].output_offsets[1] = bad.out;
    for (const std::string& algorithm : kRaggedAlgorithms) {
      EXPECT_ERROR(
          run_ragged(members, [&](int) { return algorithm; }, [](int) { return DType::kInt64; }),
          InvalidArgumentError, bad.needle);
    }
  }
}

// int32 index arrays with the largest int32 values: past the operand.
TEST(AdversarialRaggedTest, HugeInt32OffsetsAreRejected) {
  constexpr int64_t kMax32 = std::numeric_limits<int32_t>::max();
  std::vector<RaggedMember> members(2);
  for (RaggedMember& m : members) {
    m.operand_rows = m.output_rows = 4;
    m.input_offsets = {0, 0};
    m.send_sizes = {1, 1};
    m.output_offsets = {0, 1};
    m.recv_sizes = {1, 1};
  }
  members[1].output_offsets[0] = kMax32;
  for (const std::string& algorithm : kRaggedAlgorithms) {
    EXPECT_ERROR(run_ragged(members, algorithm), InvalidArgumentError,
                 "output_offsets[0] = 2147483647");
  }
}

// recv_sizes that disagree with the senders, with 3 members and 3 slices per
// peer: the error names both entries, whatever the algorithm.
TEST(AdversarialRaggedTest, DisagreeingRecvSizesNameBothEntries) {
  auto members = random_layout(3, 3, 9, 2, 17);
  // Device 2's entry for sender 1, slice 2 (entry 1*3+2 = 5): sender 1's
  // entry 2*3+2 = 8.
  const int64_t sent = members[1].send_sizes[8];
  members[2].recv_sizes[5] = sent + 3;
  const std::string needle = "recv_sizes[5] = " + std::to_string(sent + 3) +
                             " on peer 2 (device 2) but peer 1 (device 1) sends it send_sizes[8] = " +
                             std::to_string(sent);
  for (const std::string& algorithm : kRaggedAlgorithms) {
    EXPECT_ERROR(run_ragged(members, algorithm), InvalidArgumentError, needle);
  }
}

// A receiver that expects 0 rows where the sender sends some, and the reverse.
TEST(AdversarialRaggedTest, RecvSizesZeroVersusNonZero) {
  std::vector<RaggedMember> members(2);
  for (RaggedMember& m : members) {
    m.operand_rows = m.output_rows = 4;
    m.input_offsets = {0, 0};
    m.send_sizes = {0, 3};
    m.output_offsets = {0, 0};
    m.recv_sizes = {0, 0};
  }
  // device 0 sends 3 rows to device 1, which says recv_sizes[0] = 0.
  members[1].recv_sizes = {0, 3};  // entry 1 is its own: it sends itself 3
  for (const std::string& algorithm : kRaggedAlgorithms) {
    EXPECT_ERROR(run_ragged(members, algorithm), InvalidArgumentError,
                 "recv_sizes[0] = 0 on peer 1 (device 1) but peer 0 (device 0) sends it "
                 "send_sizes[1] = 3");
  }
}

// Members that choose different algorithms (by name, "" through a rule, or
// "auto") fail everywhere with CollectiveMismatchError, never hang.
TEST(AdversarialRaggedTest, MembersChoosingDifferentAlgorithms) {
  const auto members = random_layout(4, 2, 6, 1, 3);
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"direct", "pairwise"}, {"pairwise", "linear"}, {"linear", "direct"}, {"", "pairwise"}};
  for (const auto& [a, b] : pairs) {
    EXPECT_ERROR(run_ragged(members, [&a = a, &b = b](int p) { return p == 2 ? b : a; }),
                 CollectiveMismatchError, "");
  }
  // A rule makes "" mean linear; one member names pairwise.
  EXPECT_ERROR(run_ragged(
                   members, [](int p) { return p == 0 ? std::string("pairwise") : std::string(); },
                   [](int) { return DType::kInt32; },
                   [](AlgorithmRegistry& reg) {
                     reg.add_rule({.collective = Collective::kRaggedAllToAll,
                                   .algorithm = "linear"});
                   }),
               CollectiveMismatchError, "");
}

// "auto" on one member and, on the others, the name auto picks: the same
// algorithm runs everywhere, so the call works and equals direct.
TEST(AdversarialRaggedTest, AutoOnOneMemberAndItsPickByNameOnTheOthers) {
  const auto members = random_layout(4, 2, 6, 1, 31337);
  std::string picked;
  {
    Runtime rt(4, with_timeout());
    rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
      const int p = ctx.position();
      const RaggedMember& m = members[p];
      ragged_all_to_all(ctx, operand_of(m, p), output_of(m, p),
                        index_array(m.input_offsets, DType::kInt32),
                        index_array(m.send_sizes, DType::kInt32),
                        index_array(m.output_offsets, DType::kInt32),
                        index_array(m.recv_sizes, DType::kInt32), "x", {}, "auto");
      if (p == 0) picked = std::string(ctx.collective_records().back().algorithm);
    });
  }
  ASSERT_FALSE(picked.empty());
  const auto direct = run_ragged(members, "direct");
  expect_same_arrays(run_ragged(members, [&](int p) { return p == 0 ? std::string("auto") : picked; }),
                     direct, "auto + " + picked);
}

// Names that are not quite names.
TEST(AdversarialRaggedTest, UnknownNamesListTheValidOnes) {
  const auto members = random_layout(2, 1, 3, 1, 4);
  for (const std::string name : {"PAIRWISE", " pairwise", "pairwise ", "ring", "auto ", "dir"}) {
    EXPECT_ERROR(run_ragged(members, name), UnknownAlgorithmError, "direct, pairwise, linear, auto");
  }
  // An unknown name on one member only: that member fails, the other is not
  // left blocked.
  EXPECT_ERROR(run_ragged(members, [](int p) { return p == 1 ? std::string("bogus") : std::string("pairwise"); }),
               UnknownAlgorithmError, "bogus");
}

// Runtime rules: add_rule and set_environment_rules choose the algorithm for
// "" (and what ran is recorded); the results equal direct's.
TEST(AdversarialRaggedTest, RulesChooseTheAlgorithm) {
  const auto members = random_layout(3, 2, 6, 2, 8);
  const auto direct = run_ragged(members, "direct");
  for (const std::string& chosen : {"pairwise", "linear"}) {
    for (int via_env = 0; via_env < 2; ++via_env) {
      const int n = 3;
      Runtime rt(n, with_timeout());
      if (via_env) {
        algorithm_registry(rt).set_environment_rules("ragged_all_to_all:" + chosen);
      } else {
        algorithm_registry(rt).add_rule(
            {.collective = Collective::kRaggedAllToAll, .algorithm = chosen});
      }
      std::vector<Array> results(n);
      std::vector<std::string> ran(n);
      rt.launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
        const int p = ctx.position();
        const RaggedMember& m = members[p];
        results[p] = ragged_all_to_all(
            ctx, operand_of(m, p), output_of(m, p), index_array(m.input_offsets, DType::kInt32),
            index_array(m.send_sizes, DType::kInt32), index_array(m.output_offsets, DType::kInt32),
            index_array(m.recv_sizes, DType::kInt32), "x");
        ran[p] = std::string(ctx.collective_records().back().algorithm);
      });
      for (int r = 0; r < n; ++r) {
        EXPECT_EQ(ran[r], chosen) << (via_env ? "env" : "rule");
        EXPECT_TRUE(array_equal(results[r], direct[r])) << chosen;
      }
    }
  }
}

TEST(AdversarialRaggedTest, BadRulesAreRejectedByName) {
  Runtime rt(2, with_timeout());
  AlgorithmRegistry& reg = algorithm_registry(rt);
  EXPECT_ERROR(reg.add_rule({.collective = Collective::kRaggedAllToAll, .algorithm = "ring"}),
               UnknownAlgorithmError, "ring");
  EXPECT_ERROR(reg.set_environment_rules("ragged_all_to_all:pairwise:64K-1K;;:"),
               InvalidArgumentError, "");
  // A well-formed spec naming an algorithm the collective lacks: rejected
  // when set, or when a call would choose it.
  bool rejected_at_set = false;
  try {
    reg.set_environment_rules("ragged_all_to_all:bruck");
  } catch (const InvalidArgumentError& e) {
    rejected_at_set = true;
    EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr("bruck"));
  }
  if (!rejected_at_set) {
    const auto members = random_layout(2, 1, 3, 1, 4);
    EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                           [&](DeviceContext& ctx) {
                             const int p = ctx.position();
                             const RaggedMember& m = members[p];
                             ragged_all_to_all(ctx, operand_of(m, p), output_of(m, p),
                                               index_array(m.input_offsets, DType::kInt32),
                                               index_array(m.send_sizes, DType::kInt32),
                                               index_array(m.output_offsets, DType::kInt32),
                                               index_array(m.recv_sizes, DType::kInt32), "x");
                           }),
                 UnknownAlgorithmError, "bruck");
  }
}

// Output rows that differ across members: CollectiveMismatchError on every
// algorithm (a sender checks landings against its own output rows).
TEST(AdversarialRaggedTest, OutputRowsDifferingAcrossMembers) {
  auto members = random_layout(3, 1, 6, 1, 12);
  members[1].output_rows = 7;
  for (const std::string& algorithm : kRaggedAlgorithms) {
    EXPECT_ERROR(run_ragged(members, algorithm), CollectiveMismatchError, "");
  }
}

// Index arrays of different lengths across members (spd 1 on one, 2 on the
// others): CollectiveMismatchError, not a read past an index array.
TEST(AdversarialRaggedTest, SlicesPerPeerDifferingAcrossMembers) {
  auto members = random_layout(2, 2, 6, 1, 12);
  const auto one = random_layout(2, 1, 6, 1, 13);
  members[0].input_offsets = one[0].input_offsets;
  members[0].send_sizes = one[0].send_sizes;
  members[0].output_offsets = one[0].output_offsets;
  members[0].recv_sizes = one[0].recv_sizes;
  for (const std::string& algorithm : kRaggedAlgorithms) {
    EXPECT_ERROR(run_ragged(members, algorithm), CollectiveMismatchError, "");
  }
}

// axis_index_groups on a 2x4 mesh: groups over "y" {{0, 2}, {1, 3}}; every
// algorithm equals direct bitwise.
TEST(AdversarialRaggedTest, AxisIndexGroupsMatchDirect) {
  const AxisIndexGroups groups = {{0, 2}, {1, 3}};
  // Per device (8 of them): a layout for a group of 2, spd 3.
  const auto layout_a = random_layout(2, 3, 7, 3, 41);
  const auto run = [&](const std::string& algorithm) {
    std::vector<Array> results(8);
    Runtime rt(8, with_timeout());
    rt.launch(Mesh::make({{"x", 2}, {"y", 4}}), [&](DeviceContext& ctx) {
      const int y = ctx.axis_index("y");
      const int rank = (y == 0 || y == 1) ? 0 : 1;  // position in {0,2} / {1,3}
      const RaggedMember& m = layout_a[rank];
      const int p = ctx.position();
      results[p] = ragged_all_to_all(ctx, operand_of(m, p), output_of(m, p),
                                     index_array(m.input_offsets, DType::kInt64),
                                     index_array(m.send_sizes, DType::kInt64),
                                     index_array(m.output_offsets, DType::kInt64),
                                     index_array(m.recv_sizes, DType::kInt64), "y", groups,
                                     algorithm);
    });
    return results;
  };
  const auto direct = run("direct");
  for (const std::string& algorithm : kRaggedAlgorithms) {
    const auto results = run(algorithm);
    for (int p = 0; p < 8; ++p) {
      EXPECT_TRUE(array_equal(results[p], direct[p]))
          << algorithm << " device " << p << ": " << first_difference(results[p], direct[p]);
    }
  }
}

// A group over two mesh axes (major-to-minor "y", "x" of a 2x3 mesh), each
// algorithm against direct.
TEST(AdversarialRaggedTest, TwoAxesGroupMatchesDirect) {
  const auto layout = random_layout(6, 2, 8, 2, 2024);
  const auto run = [&](const std::string& algorithm) {
    std::vector<Array> results(6);
    Runtime rt(6, with_timeout());
    rt.launch(Mesh::make({{"x", 2}, {"y", 3}}), [&](DeviceContext& ctx) {
      const int rank = ctx.axis_index({"y", "x"});
      const RaggedMember& m = layout[rank];
      results[ctx.position()] = ragged_all_to_all(
          ctx, operand_of(m, rank), output_of(m, rank), index_array(m.input_offsets, DType::kInt64),
          index_array(m.send_sizes, DType::kInt64), index_array(m.output_offsets, DType::kInt64),
          index_array(m.recv_sizes, DType::kInt64), {"y", "x"}, {}, algorithm);
      // Rank r of the group is member r of the reference layout.
      const Array expected = ragged_reference(layout, rank);
      EXPECT_TRUE(array_equal(results[ctx.position()], expected))
          << algorithm << " rank " << rank << ": "
          << first_difference(results[ctx.position()], expected);
    });
    return results;
  };
  const auto direct = run("direct");
  for (const std::string& algorithm : kRaggedAlgorithms) {
    expect_same_arrays(run(algorithm), direct, "two axes " + algorithm);
  }
}

// Unequal axis_index_groups: GroupError, for every algorithm.
TEST(AdversarialRaggedTest, UnequalAxisIndexGroups) {
  for (const std::string& algorithm : kRaggedAlgorithms) {
    Runtime rt(3, with_timeout());
    EXPECT_ERROR(rt.launch(Mesh::make({{"x", 3}}),
                           [&](DeviceContext& ctx) {
                             const Array idx = index_array({0, 0}, DType::kInt32);
                             ragged_all_to_all(ctx, Array::zeros({2}, DType::kFloat32),
                                               Array::zeros({2}, DType::kFloat32), idx, idx, idx,
                                               idx, "x", {{0, 1}, {2}}, algorithm);
                           }),
                 GroupError, "same size");
  }
}

// 64 devices, 2 slices per peer, with each algorithm: equals the reference.
TEST(AdversarialRaggedTest, SixtyFourDevicesEveryAlgorithm) {
  const auto members = random_layout(64, 2, 16, 2, 64);
  for (const std::string& algorithm : kRaggedAlgorithms) {
    expect_all_match_reference(members, run_ragged(members, algorithm), algorithm);
  }
}


// A user ragged_all_to_all algorithm that moves nothing and reports nothing
// received: the front-end's recv_sizes check names the first disagreement
// (no garbage result is returned).
TEST(AdversarialRaggedTest, LazyUserAlgorithmIsCaughtByTheRecvSizesCheck) {
  const auto members = random_layout(3, 2, 6, 1, 5150);
  int64_t nonzero = 0;
  for (int64_t v : members[0].recv_sizes) nonzero += v;
  ASSERT_GT(nonzero, 0);
  EXPECT_ERROR(run_ragged(
                   members, [](int) { return std::string("lazy"); },
                   [](int) { return DType::kInt32; },
                   [](AlgorithmRegistry& reg) {
                     Algorithm<RaggedAllToAllArgs> a;
                     a.name = "lazy";
                     a.description = "does nothing";
                     a.cost_formula = "0";
                     a.cost = [](const CallShape&) { return CostTerms{}; };
                     a.run = [](Communicator&, const RaggedAllToAllArgs&) {};
                     reg.add(std::move(a));
                   }),
               InvalidArgumentError, "sends it send_sizes[");
}

// The same Array as operand and output (and a reshaped alias of it): the
// caller's array is unchanged and every algorithm equals direct.
TEST(AdversarialRaggedTest, OperandAliasedAsOutput) {
  const auto members = random_layout(3, 2, 6, 2, 808);
  const auto run = [&](const std::string& algorithm) {
    std::vector<Array> results(3);
    std::vector<int> unchanged(3, 0);
    Runtime rt(3, with_timeout());
    rt.launch(Mesh::make({{"x", 3}}), [&](DeviceContext& ctx) {
      const int p = ctx.position();
      const RaggedMember& m = members[p];
      const Array operand = operand_of(m, p);
      const Array before = operand_of(m, p);
      results[p] = ragged_all_to_all(ctx, operand, operand.reshape({6, 2}),
                                     index_array(m.input_offsets, DType::kInt32),
                                     index_array(m.send_sizes, DType::kInt32),
                                     index_array(m.output_offsets, DType::kInt32),
                                     index_array(m.recv_sizes, DType::kInt32), "x", {}, algorithm);
      unchanged[p] = array_equal(operand, before);
    });
    EXPECT_EQ(unchanged, std::vector<int>(3, 1)) << algorithm;
    return results;
  };
  const auto direct = run("direct");
  for (const std::string& algorithm : kRaggedAlgorithms) {
    expect_same_arrays(run(algorithm), direct, "aliased " + algorithm);
  }
}

// 16 devices with 200 slices per peer (3200 entries a member, most of them
// empty, landings overlapping): every algorithm equals the reference.
TEST(AdversarialRaggedTest, SixteenDevicesManySlicesPerPeer) {
  const auto members = random_layout(16, 200, 24, 1, 640, 2);
  for (const std::string& algorithm : {"pairwise", "linear", "direct"}) {
    expect_all_match_reference(members, run_ragged(members, algorithm), algorithm);
  }
}

// Operand of rank 3 and of other dtypes (a row is several elements, not a
// multiple of 8 bytes): every algorithm equals direct.
TEST(AdversarialRaggedTest, HigherRankOperandsAndOddRowSizes) {
  const auto members = random_layout(3, 2, 6, 1, 77);
  for (const DType dtype : {DType::kUInt8, DType::kFloat64, DType::kBool, DType::kInt8}) {
    const auto run = [&](const std::string& algorithm) {
      std::vector<Array> results(3);
      Runtime rt(3, with_timeout());
      rt.launch(Mesh::make({{"x", 3}}), [&](DeviceContext& ctx) {
        const int p = ctx.position();
        const RaggedMember& m = members[p];
        Array operand = Array::empty({6, 3, 5}, DType::kInt64);
        int64_t v = 1000 * p;
        for (int64_t& x : operand.mutable_span<int64_t>()) x = v++;
        const Array output = Array::full({6, 3, 5}, dtype, 1);
        results[p] = ragged_all_to_all(
            ctx, operand.astype(dtype), output, index_array(m.input_offsets, DType::kInt64),
            index_array(m.send_sizes, DType::kInt32), index_array(m.output_offsets, DType::kInt64),
            index_array(m.recv_sizes, DType::kInt32), "x", {}, algorithm);
      });
      return results;
    };
    const auto direct = run("direct");
    for (const std::string& algorithm : kRaggedAlgorithms) {
      expect_same_arrays(run(algorithm), direct, algorithm + " " + std::string(dtype_name(dtype)));
    }
  }
}

// An index array of a float dtype, of rank 2, or of length 0: named errors.
TEST(AdversarialRaggedTest, MalformedIndexArrays) {
  const auto call = [](const Array& io, const Array& ss, const Array& oo, const Array& rs,
                       const std::string& algorithm) {
    Runtime rt(2, with_timeout());
    rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
      ragged_all_to_all(ctx, Array::zeros({4}, DType::kFloat32), Array::zeros({4}, DType::kFloat32),
                        io, ss, oo, rs, "x", {}, algorithm);
    });
  };
  const Array ok = index_array({0, 0}, DType::kInt32);
  for (const std::string& algorithm : kRaggedAlgorithms) {
    EXPECT_ERROR(call(ok, Array::zeros({2}, DType::kFloat32), ok, ok, algorithm), DTypeError,
                 "send_sizes must be int32 or int64");
    EXPECT_ERROR(call(ok, ok, ok, Array::zeros({2}, DType::kUInt32), algorithm), DTypeError,
                 "recv_sizes must be int32 or int64");
    EXPECT_ERROR(call(ok, ok, Array::zeros({1, 2}, DType::kInt32), ok, algorithm),
                 CollectiveShapeError, "output_offsets must have rank 1");
    const Array none = Array::zeros({0}, DType::kInt64);
    EXPECT_ERROR(call(none, none, none, none, algorithm), CollectiveShapeError,
                 "not a positive multiple of the group size 2");
    const Array three = index_array({0, 0, 0}, DType::kInt64);
    EXPECT_ERROR(call(three, three, three, three, algorithm), CollectiveShapeError,
                 "not a positive multiple of the group size 2");
    EXPECT_ERROR(call(ok, ok, ok, three, algorithm), CollectiveShapeError,
                 "recv_sizes has 3 entries but input_offsets has 2");
  }
}

// ---------------------------------------------------------------------------
// Communicator, from a user-registered all_reduce algorithm
// ---------------------------------------------------------------------------

using UserRun = std::function<void(Communicator&, const AllReduceArgs&)>;

// The body the registered "adv" algorithm runs: set by run_user for its
// launch (tests run one at a time; a runtime reused across run_user calls
// keeps its one registration).
const UserRun* g_user_run = nullptr;

// Registers `run` as all_reduce algorithm "adv" (with a segment_bytes tunable
// of `segment_bytes`, 0: one segment) and runs psum over "x" of n devices
// with it. The algorithm copies in to out first, so psum's result is each
// device's input unless `run` writes out.
void run_user(int n, int64_t segment_bytes, const UserRun& run, Runtime* runtime = nullptr) {
  std::unique_ptr<Runtime> own;
  if (runtime == nullptr) {
    own = std::make_unique<Runtime>(n, with_timeout());
    runtime = own.get();
  }
  AlgorithmRegistry& reg = algorithm_registry(*runtime);
  if (reg.find(Collective::kAllReduce, "adv") == nullptr) {
    Algorithm<AllReduceArgs> a;
    a.name = "adv";
    a.description = "adversarial test algorithm";
    a.cost_formula = "α";
    a.cost = [](const CallShape&) { return CostTerms{1, 0, 0}; };
    a.tunables = {{"segment_bytes", 0, "bytes per segment"}};
    a.run = [](Communicator& comm, const AllReduceArgs& args) {
      const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
      if (args.out != args.in && bytes > 0) std::memcpy(args.out, args.in, bytes);
      (*g_user_run)(comm, args);
    };
    reg.add(std::move(a));
  }
  reg.set_tunable(Collective::kAllReduce, "adv", "segment_bytes", segment_bytes);
  g_user_run = &run;
  runtime->launch(Mesh::make({{"x", n}}), [&](DeviceContext& ctx) {
    psum(ctx, Array::full({4}, DType::kInt32, ctx.position()), "x", {}, "adv");
  });
}

std::vector<unsigned char> pattern(int rank, size_t bytes, int salt = 0) {
  std::vector<unsigned char> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>(rank * 37 + i * 11 + salt);
  return v;
}

// A ring of asymmetric sendrecvs: rank r sends size(r) bytes to r+1 and
// receives size(r-1) from r-1, with sizes on both sides of
// Link::kInlineBytes, zero one way and many the other, one segment or many.
TEST(AdversarialCommunicatorTest, AsymmetricSendrecvRing) {
  const std::vector<size_t> sizes = {0, 1, 23, 24, 25, 64, 65, 1000, 0, 3000, 24};
  for (int n : {1, 2, 3, 5}) {
    for (int64_t segment : {0, 64, 128}) {
      for (size_t shift = 0; shift < sizes.size(); ++shift) {
        const auto size_of = [&](int r) { return sizes[(r + shift) % sizes.size()]; };
        std::vector<int> bad(n, 0);
        run_user(n, segment, [&](Communicator& comm, const AllReduceArgs&) {
          const int r = comm.rank(), m = comm.size();
          const int to = (r + 1) % m, from = (r + m - 1) % m;
          const auto send = pattern(r, size_of(r));
          std::vector<unsigned char> recv(size_of(from) + 8, 0xEE);
          comm.sendrecv(to, send.data(), send.size(), from, recv.data(), size_of(from));
          const auto expected = pattern(from, size_of(from));
          if (!std::equal(expected.begin(), expected.end(), recv.begin())) bad[r] = 1;
          for (size_t i = size_of(from); i < recv.size(); ++i) {
            if (recv[i] != 0xEE) bad[r] = 2;  // written past recv_bytes
          }
        });
        for (int r = 0; r < n; ++r) {
          EXPECT_EQ(bad[r], 0) << "n=" << n << " segment=" << segment << " shift=" << shift
                               << " rank " << r;
        }
      }
    }
  }
}

// Sizes that disagree between the two sides: CollectiveShapeError naming
// both devices and both sizes, and the receive buffer untouched (no torn
// read), whether the sizes are inline (<= 24 bytes) or not, in one segment or
// many.
TEST(AdversarialCommunicatorTest, SendrecvSizeMismatchIsCollectiveShapeError) {
  const std::vector<std::pair<size_t, size_t>> pairs = {
      {20, 30}, {30, 20}, {24, 25}, {25, 24}, {0, 100}, {100, 0}, {0, 1},
      {1, 0},   {1000, 999}, {64, 65}, {65, 64}, {128, 127}, {4096, 4160}};
  for (int64_t segment : {0, 64}) {
    for (const auto& [sent, expected] : pairs) {
      std::vector<unsigned char> landing(5000, 0xCD);
      EXPECT_ERROR(run_user(2, segment,
                            [&, sent = sent, expected = expected](Communicator& comm,
                                                                  const AllReduceArgs&) {
                              const int r = comm.rank();
                              const int peer = 1 - r;
                              // rank 0 sends `sent` and expects 8; rank 1
                              // sends 8 and expects `expected`.
                              const auto data = pattern(r, r == 0 ? sent : 8);
                              std::vector<unsigned char> mine(16);
                              void* into = r == 1 ? landing.data() : mine.data();
                              comm.sendrecv(peer, data.data(), data.size(), peer, into,
                                            r == 1 ? expected : 8);
                            }),
                   CollectiveShapeError,
                   "device 1 expected a transfer of " + std::to_string(expected) +
                       " bytes from device 0, which sent " + std::to_string(sent) + " bytes");
      bool untouched = true;
      for (unsigned char c : landing) untouched = untouched && c == 0xCD;
      EXPECT_TRUE(untouched) << "torn read: sent " << sent << " expected " << expected
                             << " segment " << segment;
    }
  }
}

// The same with plain send / recv, and recv_reduce of a different count.
TEST(AdversarialCommunicatorTest, SendRecvSizeMismatchIsCollectiveShapeError) {
  for (int64_t segment : {0, 64}) {
    for (const auto& [sent, expected] : std::vector<std::pair<size_t, size_t>>{
             {8, 16}, {16, 8}, {24, 32}, {32, 24}, {200, 100}, {0, 8}}) {
      EXPECT_ERROR(run_user(3, segment,
                            [&, sent = sent, expected = expected](Communicator& comm,
                                                                  const AllReduceArgs&) {
                              if (comm.rank() == 2) {
                                const auto data = pattern(2, sent);
                                comm.send(0, data.data(), data.size());
                              } else if (comm.rank() == 0) {
                                std::vector<unsigned char> into(expected);
                                comm.recv(2, into.data(), into.size());
                              }
                            }),
                   CollectiveShapeError,
                   "device 0 expected a transfer of " + std::to_string(expected) +
                       " bytes from device 2, which sent " + std::to_string(sent));
    }
    EXPECT_ERROR(run_user(2, segment,
                          [&](Communicator& comm, const AllReduceArgs&) {
                            std::vector<float> v(40, 1.0f);
                            if (comm.rank() == 0) comm.send(1, v.data(), 40 * sizeof(float));
                            if (comm.rank() == 1) {
                              comm.recv_reduce(0, v.data(), 39, DType::kFloat32, ReduceOp::kSum);
                            }
                          }),
                 CollectiveShapeError, "expected a transfer of 156 bytes from device 0");
  }
}

// Buffers of at most Link::kInlineBytes are free as soon as send() returns:
// the sender overwrites it before the receiver even starts receiving (the
// barrier orders the two) and the receiver still gets the old bytes.
TEST(AdversarialCommunicatorTest, InlineSendBufferIsFreeAtOnce) {
  for (size_t bytes : {size_t{1}, size_t{8}, size_t{16}, size_t{24}}) {
    std::vector<unsigned char> got(bytes);
    run_user(2, 0, [&](Communicator& comm, const AllReduceArgs&) {
      if (comm.rank() == 0) {
        std::vector<unsigned char> buf = pattern(0, bytes);
        comm.send(1, buf.data(), bytes);
        std::fill(buf.begin(), buf.end(), 0xFF);
        buf.clear();
        buf.shrink_to_fit();  // freed: a later read would be a use after free
        comm.barrier();
      } else {
        comm.barrier();
        comm.recv(0, got.data(), bytes);
      }
    });
    EXPECT_EQ(got, pattern(0, bytes)) << bytes << " bytes";
  }
}

// More than Link::kSlots inline sends queued on one link before the receiver
// reads any: the sender waits for credits (no overwrite of an unread slot).
TEST(AdversarialCommunicatorTest, ManyInlineSendsBeforeAnyReceive) {
  constexpr int kMessages = 40;
  std::vector<uint64_t> got(kMessages, 0);
  run_user(2, 0, [&](Communicator& comm, const AllReduceArgs&) {
    if (comm.rank() == 0) {
      for (uint64_t i = 0; i < kMessages; ++i) {
        uint64_t v = 1000 + i;
        comm.send(1, &v, sizeof v);
        v = 0;  // free at once
      }
    } else {
      for (int i = 0; i < kMessages; ++i) comm.recv(0, &got[i], sizeof(uint64_t));
    }
  });
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(got[i], 1000u + i);
}

// Ranks out of range, for every entry point: InvalidArgumentError naming the
// rank; the peers waiting on the offender are released.
TEST(AdversarialCommunicatorTest, RanksOutOfRange) {
  struct Call {
    const char* name;
    std::function<void(Communicator&)> call;
    const char* needle;
  };
  unsigned char buf[64] = {}, buf2[64] = {};
  const std::vector<Call> calls = {
      {"send -1", [&](Communicator& c) { c.send(-1, buf, 8); }, "send names rank -1"},
      {"send n", [&](Communicator& c) { c.send(3, buf, 8); }, "send names rank 3"},
      {"recv n", [&](Communicator& c) { c.recv(3, buf, 8); }, "recv names rank 3"},
      {"recv big", [&](Communicator& c) { c.recv(1 << 30, buf, 8); }, "names rank 1073741824"},
      {"recv_reduce", [&](Communicator& c) { c.recv_reduce(-5, buf, 2, DType::kInt32, ReduceOp::kSum); },
       "recv_reduce names rank -5"},
      {"sendrecv to", [&](Communicator& c) { c.sendrecv(3, buf, 8, 1, buf2, 8); }, "names rank 3"},
      {"sendrecv from", [&](Communicator& c) { c.sendrecv(1, buf, 8, -1, buf2, 8); }, "names rank -1"},
      {"sendrecv_reduce", [&](Communicator& c) {
         c.sendrecv_reduce(1, buf, 7, buf2, 2, DType::kInt32, ReduceOp::kSum);
       }, "names rank 7"},
      {"device_id", [&](Communicator& c) { (void)c.device_id(3); }, "device_id names rank 3"},
  };
  for (const Call& call : calls) {
    EXPECT_ERROR(run_user(3, 0,
                          [&](Communicator& comm, const AllReduceArgs&) {
                            if (comm.rank() == 0) {
                              call.call(comm);
                            } else {
                              // Waits for rank 0 forever unless cancelled.
                              unsigned char into[8];
                              comm.recv(0, into, 8);
                            }
                          }),
                 InvalidArgumentError, call.needle);
  }
}

// A negative count for recv_reduce / sendrecv_reduce.
TEST(AdversarialCommunicatorTest, NegativeCounts) {
  unsigned char buf[64] = {}, buf2[64] = {};
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          comm.recv_reduce(1 - comm.rank(), buf, -1, DType::kInt32, ReduceOp::kSum);
                        }),
               InvalidArgumentError, "negative count -1");
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          const int p = 1 - comm.rank();
                          comm.sendrecv_reduce(p, buf, p, buf2, -3, DType::kFloat32,
                                               ReduceOp::kMax);
                        }),
               InvalidArgumentError, "negative count -3");
}

// Self-sends: a sendrecv with oneself, small and large, in one segment or
// many, moves the bytes.
TEST(AdversarialCommunicatorTest, SelfSendrecv) {
  for (int64_t segment : {0, 64}) {
    for (size_t bytes : {size_t{0}, size_t{5}, size_t{24}, size_t{25}, size_t{2000}}) {
      std::vector<int> ok(3, 0);
      run_user(3, segment, [&](Communicator& comm, const AllReduceArgs&) {
        const int r = comm.rank();
        const auto data = pattern(r, bytes, 5);
        std::vector<unsigned char> into(bytes);
        comm.sendrecv(r, data.data(), bytes, r, into.data(), bytes);
        ok[r] = into == data;
      });
      EXPECT_EQ(ok, std::vector<int>(3, 1)) << bytes << " bytes, segment " << segment;
    }
  }
}

// A blocking send to oneself of more segments than the link has slots, before
// the matching recv: the member waits for itself. That is the user's
// deadlock, and it must be reported (DeadlockError), not hang.
TEST(AdversarialCommunicatorTest, SelfSendOverflowingTheRingIsADeadlock) {
  EXPECT_ERROR(run_user(2, 64,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          if (comm.rank() != 0) return;
                          const auto data = pattern(0, 64 * 20);
                          comm.send(0, data.data(), data.size());
                          std::vector<unsigned char> into(data.size());
                          comm.recv(0, into.data(), into.size());
                        }),
               DeadlockError, "");
}

// sendrecv whose receive buffer overlaps its send buffer.
TEST(AdversarialCommunicatorTest, OverlappingSendrecvBuffers) {
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          std::vector<unsigned char> buf(100);
                          const int p = 1 - comm.rank();
                          comm.sendrecv(p, buf.data(), 60, p, buf.data() + 50, 40);
                        }),
               InvalidArgumentError, "overlaps");
}

// A user algorithm that throws its own exception (no sends in flight) while
// its peers wait to receive from it: DeviceError with the message, nobody
// blocked, the runtime usable afterwards.
TEST(AdversarialCommunicatorTest, UserExceptionReleasesPeers) {
  Runtime rt(4, with_timeout());
  for (int round = 0; round < 3; ++round) {
    EXPECT_ERROR(run_user(4, 0,
                          [&](Communicator& comm, const AllReduceArgs&) {
                            if (comm.rank() == 2) throw std::runtime_error("user boom");
                            unsigned char into[100];
                            comm.recv(2, into, sizeof into);
                          },
                          &rt),
                 DeviceError, "user boom");
  }
  // Still usable: a real exchange afterwards.
  std::vector<int> ok(4, 0);
  run_user(4, 0, [&](Communicator& comm, const AllReduceArgs&) {
    const int r = comm.rank();
    const auto data = pattern(r, 100);
    std::vector<unsigned char> into(100);
    comm.sendrecv((r + 1) % 4, data.data(), 100, (r + 3) % 4, into.data(), 100);
    ok[r] = into == pattern((r + 3) % 4, 100);
  }, &rt);
  EXPECT_EQ(ok, std::vector<int>(4, 1));
}

// Rank 0 sends `bytes` from a vector it owns and throws `message`; rank 1
// receives only once rank 0's unwinding has freed that vector (the atomic
// forces the interleaving that can happen on its own). The launch must fail
// with rank 0's error, and rank 1 must never read the freed vector (ASan).
void expect_throw_with_send_in_flight(size_t bytes, const std::string& message) {
  std::atomic<bool> freed{false};
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          if (comm.rank() == 0) {
                            struct SetOnExit {
                              std::atomic<bool>& flag;
                              ~SetOnExit() { flag = true; }
                            } guard{freed};
                            auto scratch =
                                std::make_unique<std::vector<unsigned char>>(pattern(0, bytes));
                            comm.send(1, scratch->data(), scratch->size());
                            throw std::runtime_error(message);
                          }
                          while (!freed.load()) {
                          }
                          std::vector<unsigned char> into(bytes);
                          comm.recv(0, into.data(), into.size());
                        }),
               DeviceError, message);
}

// An inline send in flight (<= 24 bytes, copied at post): its buffer is
// already free, so the peer's read is safe.
TEST(AdversarialCommunicatorTest, UserExceptionWithInlineSendInFlight) {
  expect_throw_with_send_in_flight(24, "inline boom");
}

// A large send in flight (> kInlineBytes) from the algorithm's own scratch:
// unwinding frees that scratch before the front-end's catch stops the
// launch, so the peer must not be reading it in place (it was copied into
// call-owned memory at send). Found by this suite as a heap-use-after-free.
TEST(AdversarialCommunicatorTest, UserExceptionWithLargeSendInFlightFreesNothingThePeerReads) {
  expect_throw_with_send_in_flight(4096, "large boom");
}

// The same when the algorithm just returns with a send from its own scratch
// unread ("need not end with wait_sends"): the front-end's wait comes after
// the scratch is freed, so the send must not be read from it in place.
TEST(AdversarialCommunicatorTest, ReturningWithALocalScratchSendInFlightIsSafe) {
  std::atomic<bool> freed{false};
  std::vector<unsigned char> got(4096);
  run_user(2, 0, [&](Communicator& comm, const AllReduceArgs&) {
    if (comm.rank() == 0) {
      struct SetOnExit {
        std::atomic<bool>& flag;
        ~SetOnExit() { flag = true; }
      } guard{freed};
      auto scratch = std::make_unique<std::vector<unsigned char>>(pattern(0, 4096));
      comm.send(1, scratch->data(), scratch->size());
      return;  // "need not end with wait_sends"
    }
    while (!freed.load()) {
    }
    comm.recv(0, got.data(), got.size());
  });
  EXPECT_EQ(got, pattern(0, 4096));
}

// Runs psum with "adv" `calls` times in one launch of 2 devices; the body
// learns which call it is in.
void run_user_calls(Runtime& rt, int calls,
                    const std::function<void(Communicator&, int call)>& body) {
  std::vector<int> call_of(2, 0);
  const UserRun run = [&](Communicator& comm, const AllReduceArgs&) {
    body(comm, call_of[comm.rank()]++);
  };
  AlgorithmRegistry& reg = algorithm_registry(rt);
  if (reg.find(Collective::kAllReduce, "adv") == nullptr) run_user(2, 0, [](Communicator&, const AllReduceArgs&) {}, &rt);
  g_user_run = &run;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    for (int i = 0; i < calls; ++i) {
      psum(ctx, Array::full({4}, DType::kInt32, ctx.position()), "x", {}, "adv");
    }
  });
}

// An inline send (<= 24 bytes, so nothing waits for it to be read) that its
// receiver never receives: the algorithm returns, and the next call's receive
// on the same link must not get the stale bytes of the previous call.
TEST(AdversarialCommunicatorTest, UnreceivedInlineSendNeverReachesTheNextCall) {
  Runtime rt(2, with_timeout());
  uint64_t got = 0;
  // Call 0 does not end while its transfer is unreceived: rank 0 waits for it
  // at the call's end, rank 1 waits in call 1's meeting — a deadlock.
  EXPECT_ERROR(run_user_calls(rt, 2,
                              [&](Communicator& comm, int call) {
                                if (comm.rank() == 0) {
                                  const uint64_t v = call == 0 ? 111 : 222;
                                  comm.send(1, &v, sizeof v);
                                } else if (call == 1) {
                                  comm.recv(0, &got, sizeof got);
                                }
                              }),
               DeadlockError, "psum");
  EXPECT_NE(got, 111u) << "call 1 received call 0's stale message";
}

// The same across launches: launch 1 leaves an unreceived inline transfer,
// launch 2's receive on that link must not get it.
TEST(AdversarialCommunicatorTest, UnreceivedInlineSendNeverReachesTheNextLaunch) {
  Runtime rt(2, with_timeout());
  bool first_failed = false;
  try {
    run_user_calls(rt, 1, [&](Communicator& comm, int) {
      const uint64_t v = 111;
      if (comm.rank() == 0) comm.send(1, &v, sizeof v);
    });
  } catch (const Error&) {
    first_failed = true;
  }
  uint64_t got = 0;
  run_user_calls(rt, 1, [&](Communicator& comm, int) {
    const uint64_t v = 222;
    if (comm.rank() == 0) comm.send(1, &v, sizeof v);
    if (comm.rank() == 1) comm.recv(0, &got, sizeof got);
  });
  EXPECT_EQ(got, 222u) << "launch 2 received launch 1's stale message (launch 1 "
                       << (first_failed ? "failed" : "succeeded silently") << ")";
}

// The consequence for built-in algorithms: the stale 8-byte transfer left on
// the collective lane 0 -> 1 by a user algorithm is consumed by the next
// psum's "ring" (whose 2-member chunks of 2 int32 are 8 bytes too), which
// then returns a wrong sum without any error, in the same launch and in the
// next one.
TEST(AdversarialCommunicatorTest, UnreceivedInlineSendNeverCorruptsTheNextBuiltinAlgorithm) {
  for (int next_launch = 0; next_launch < 2; ++next_launch) {
    Runtime rt(2, with_timeout());
    std::vector<Array> sums(2);
    const UserRun leave = [](Communicator& comm, const AllReduceArgs&) {
      const uint64_t junk = 0x7777777777777777ull;
      if (comm.rank() == 0) comm.send(1, &junk, sizeof junk);
    };
    const auto ring_psum = [&](DeviceContext& ctx) {
      sums[ctx.position()] = psum(ctx, Array::full({4}, DType::kInt32, ctx.position() + 1), "x",
                                  {}, "ring");
    };
    bool failed = false;
    try {
      if (next_launch) {
        run_user(2, 0, leave, &rt);
        rt.launch(Mesh::make({{"x", 2}}), ring_psum);
      } else {
        run_user(2, 0, leave, &rt);  // registers "adv"
        g_user_run = &leave;
        rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
          psum(ctx, Array::full({4}, DType::kInt32, 0), "x", {}, "adv");
          ring_psum(ctx);
        });
      }
    } catch (const Error&) {
      failed = true;  // an error saying what was left over would be fine
    }
    if (!failed) {
      for (int p = 0; p < 2; ++p) {
        EXPECT_TRUE(array_equal(sums[p], Array::full({4}, DType::kInt32, 3)))
            << (next_launch ? "next launch" : "same launch") << ", device " << p << ": "
            << sums[p].to_string();
      }
    }
  }
}

// A large send (read in place) that its receiver never receives: the sender
// waits for it when its algorithm returns (wait_sends), the receiver has
// finished: DeadlockError naming the collective, not a hang.
TEST(AdversarialCommunicatorTest, UnreceivedLargeSendIsADeadlock) {
  Runtime rt(2, with_timeout());
  EXPECT_ERROR(run_user_calls(rt, 1,
                              [&](Communicator& comm, int) {
                                const auto data = pattern(0, 100);
                                if (comm.rank() == 0) comm.send(1, data.data(), data.size());
                              }),
               DeadlockError, "psum");
  // The runtime is usable afterwards, and the next launch gets its own data.
  std::vector<unsigned char> got(100);
  run_user_calls(rt, 1, [&](Communicator& comm, int) {
    const auto data = pattern(0, 100, 9);
    if (comm.rank() == 0) comm.send(1, data.data(), data.size());
    if (comm.rank() == 1) comm.recv(0, got.data(), got.size());
    // `data` dies with this frame, before the front-end's own wait_sends.
    comm.wait_sends();
  });
  EXPECT_EQ(got, pattern(0, 100, 9));
}

// Two members that both send more segments than the ring holds before
// receiving (instead of sendrecv): each waits for credits from the other:
// DeadlockError, not a hang. Below the ring's size the same code works.
TEST(AdversarialCommunicatorTest, MutualBlockingSendsBeyondTheRing) {
  const auto body = [](size_t segments) {
    return [segments](Communicator& comm, const AllReduceArgs&) {
      const int peer = 1 - comm.rank();
      const auto data = pattern(comm.rank(), 64 * segments);
      std::vector<unsigned char> into(data.size());
      comm.send(peer, data.data(), data.size());
      comm.recv(peer, into.data(), into.size());
      comm.wait_sends();
      if (into != pattern(peer, 64 * segments)) throw std::runtime_error("wrong bytes");
    };
  };
  run_user(2, 64, body(Link_kSlots));
  EXPECT_ERROR(run_user(2, 64, body(Link_kSlots + 1)), DeadlockError, "");
}

// A user algorithm that throws a meshsim error of its own (no sends in
// flight): its type survives the launch, with the device that raised it.
TEST(AdversarialCommunicatorTest, UserThrowsAMeshsimError) {
  EXPECT_ERROR(run_user(3, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          if (comm.rank() == 1) throw CollectiveShapeError("user shape complaint");
                          unsigned char b[40];
                          if (comm.rank() == 0) comm.recv(1, b, sizeof b);
                        }),
               CollectiveShapeError, "user shape complaint");
}

// A barrier that only some members call: the user's deadlock, reported.
TEST(AdversarialCommunicatorTest, BarrierOnSomeMembersIsADeadlock) {
  EXPECT_ERROR(run_user(3, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          if (comm.rank() != 1) comm.barrier();
                        }),
               DeadlockError, "");
}

// A collective called from inside an algorithm (through comm.context()) by
// every member: it either works (the right sums) or is a clear meshsim
// error; never a hang or a wrong answer.
TEST(AdversarialCommunicatorTest, NestedCollectiveInsideAnAlgorithm) {
  std::vector<int> inner(3, -1);
  try {
    run_user(3, 0, [&](Communicator& comm, const AllReduceArgs&) {
      const Array s = psum(comm.context(), Array::full({2}, DType::kInt32, comm.rank() + 1), "x",
                           {}, "ring");
      inner[comm.rank()] = s.at<int32_t>({1});
    });
    EXPECT_EQ(inner, std::vector<int>(3, 6));
  } catch (const Error& e) {
    std::printf("nested collective: %s\n", e.what());
  }
}

// Changing the registry from inside a launch: RuntimeUsageError, and the
// launch's other devices are not left blocked.
TEST(AdversarialCommunicatorTest, RegistryChangesDuringALaunch) {
  Runtime rt(2, with_timeout());
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           if (ctx.position() == 0) {
                             algorithm_registry(rt).add_rule(
                                 {.collective = Collective::kRaggedAllToAll, .algorithm = "linear"});
                           }
                           psum(ctx, Array::full({2}, DType::kInt32, 1), "x");
                         }),
               RuntimeUsageError, "");
}

// A subgroup with an axis the group lacks, and peer_args without
// reads_peer_args: InvalidArgumentError naming it, peers released.
TEST(AdversarialCommunicatorTest, SubgroupAndPeerArgsMisuse) {
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          if (comm.rank() == 0) (void)comm.subgroup("nope");
                          unsigned char b[4];
                          if (comm.rank() == 1) comm.recv(0, b, 4);
                        }),
               InvalidArgumentError, "subgroup axis 'nope'");
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          (void)comm.peer_args<AllReduceArgs>(1 - comm.rank());
                        }),
               InvalidArgumentError, "reads_peer_args");
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          (void)comm.tunable("not_a_tunable");
                        }),
               InvalidArgumentError, "not_a_tunable");
}

// Scratch no allocator can provide: an error naming the size (not a
// std::bad_alloc from the device), and the peer waiting for it is released.
TEST(AdversarialCommunicatorTest, ScratchBeyondAnyAllocatorIsNamed) {
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          if (comm.rank() == 0) (void)comm.scratch(size_t{1} << 62);
                          unsigned char b[4];
                          if (comm.rank() == 1) comm.recv(0, b, 4);
                        }),
               InvalidArgumentError,
               "(algorithm 'adv'): scratch of 4611686018427387904 bytes: the allocator could not "
               "provide them");
}

// A Communicator moved from (a subgroup kept in another variable) is empty:
// its use is a RuntimeUsageError, not a null dereference of the process.
TEST(AdversarialCommunicatorTest, AMovedFromCommunicatorIsAnError) {
  EXPECT_ERROR(run_user(2, 0,
                        [&](Communicator& comm, const AllReduceArgs&) {
                          Communicator sub = comm.subgroup(comm.axes()[0]);
                          const Communicator kept(std::move(sub));
                          EXPECT_EQ(kept.size(), 2);
                          // NOLINTNEXTLINE(bugprone-use-after-move): the point
                          EXPECT_ERROR((void)sub.concurrent(), RuntimeUsageError,
                                       "a Communicator used after it was moved from");
                          (void)sub.rank();  // NOLINT(bugprone-use-after-move)
                        }),
               RuntimeUsageError, "a Communicator used after it was moved from");
}


// ---------------------------------------------------------------------------
// pswapaxes, psum_start, pbroadcast_start with an algorithm
// ---------------------------------------------------------------------------

std::vector<std::string> names_of(Collective c) {
  Runtime rt(1);
  std::vector<std::string> names;
  for (const AlgorithmInfo* info : algorithm_registry(rt).list(c)) names.push_back(info->name);
  names.push_back("auto");
  names.push_back("");
  return names;
}

// Device p's input for pswapaxes over n devices: [n, 3] of distinct ints.
Array swap_input(int p, int n) {
  Array a = Array::empty({n, 3}, DType::kInt32);
  int v = 100 * p;
  for (int32_t& x : a.mutable_span<int32_t>()) x = v++;
  return a;
}

using Body = std::function<Array(DeviceContext&)>;

std::vector<Array> run_body(int n, const Body& body,
                            const std::function<void(AlgorithmRegistry&)>& configure = {}) {
  std::vector<Array> results(n);
  Runtime rt(n, with_timeout());
  if (configure) configure(algorithm_registry(rt));
  rt.launch(Mesh::make({{"x", n}}),
            [&](DeviceContext& ctx) { results[ctx.position()] = body(ctx); });
  return results;
}

TEST(AdversarialAsyncAndSwapTest, EveryAlgorithmMatchesDirect) {
  for (int n : {1, 2, 3, 4, 6}) {
    const auto swap = [&](const std::string& algo) {
      return run_body(n, [&](DeviceContext& ctx) {
        return pswapaxes(ctx, swap_input(ctx.position(), n), "x", 0, {}, algo);
      });
    };
    const auto sum = [&](const std::string& algo) {
      return run_body(n, [&](DeviceContext& ctx) {
        Pending h = psum_start(ctx, swap_input(ctx.position(), n).reshape({3 * n}), "x", {}, algo);
        return h.done();
      });
    };
    const auto bcast = [&](const std::string& algo) {
      return run_body(n, [&](DeviceContext& ctx) {
        Pending h = pbroadcast_start(ctx, swap_input(ctx.position(), n), "x", n - 1, algo);
        return h.done();
      });
    };
    const auto swap_direct = swap("direct"), sum_direct = sum("direct"), bcast_direct = bcast("direct");
    // Known answers for direct itself.
    for (int p = 0; p < n; ++p) {
      for (int s = 0; s < n; ++s) {
        for (int c = 0; c < 3; ++c) {
          EXPECT_EQ(swap_direct[p].at<int32_t>({s, c}), 100 * s + 3 * p + c);
        }
      }
      EXPECT_TRUE(array_equal(bcast_direct[p], swap_input(n - 1, n)));
      EXPECT_EQ(sum_direct[p].at<int32_t>({0}), 100 * n * (n - 1) / 2);
    }
    for (const std::string& a : names_of(Collective::kAllToAll)) {
      expect_same_arrays(swap(a), swap_direct, "pswapaxes '" + a + "' n=" + std::to_string(n));
    }
    for (const std::string& a : names_of(Collective::kAllReduce)) {
      if (a == "hierarchical") continue;  // needs several axes
      expect_same_arrays(sum(a), sum_direct, "psum_start '" + a + "' n=" + std::to_string(n));
    }
    for (const std::string& a : names_of(Collective::kBroadcast)) {
      expect_same_arrays(bcast(a), bcast_direct, "pbroadcast_start '" + a + "' n=" + std::to_string(n));
    }
  }
}

TEST(AdversarialAsyncAndSwapTest, UnknownNames) {
  EXPECT_ERROR(run_body(3, [](DeviceContext& ctx) {
                 return pswapaxes(ctx, swap_input(0, 3), "x", 0, {}, "Pairwise");
               }),
               UnknownAlgorithmError, "Pairwise");
  EXPECT_ERROR(run_body(3, [](DeviceContext& ctx) {
                 return psum_start(ctx, Array::zeros({4}, DType::kInt32), "x", {}, "rign").done();
               }),
               UnknownAlgorithmError, "rign");
  EXPECT_ERROR(run_body(3, [](DeviceContext& ctx) {
                 return pbroadcast_start(ctx, Array::zeros({4}, DType::kInt32), "x", 0, "ring")
                     .done();
               }),
               UnknownAlgorithmError, "binomial_tree");
  // Unknown on one member only.
  EXPECT_ERROR(run_body(3, [](DeviceContext& ctx) {
                 return psum_start(ctx, Array::zeros({4}, DType::kInt32), "x", {},
                                   ctx.position() == 1 ? "nope" : "ring")
                     .done();
               }),
               UnknownAlgorithmError, "nope");
}

// A user all_to_all algorithm declaring kPowerOfTwoGroup, asked for on 3
// devices: AlgorithmPreconditionError naming it and the precondition; with
// fallback, direct's result. hierarchical (several axes) on one axis, too.
TEST(AdversarialAsyncAndSwapTest, PreconditionFailures) {
  const auto add_pow2 = [](AlgorithmRegistry& reg) {
    Algorithm<AllToAllArgs> a;
    a.name = "pow2";
    a.description = "needs a power-of-two group";
    a.cost_formula = "α";
    a.cost = [](const CallShape&) { return CostTerms{1, 0, 0}; };
    a.preconditions = kPowerOfTwoGroup;
    a.run = [](Communicator& comm, const AllToAllArgs& args) {
      // A correct (if slow) all_to_all: block j to member j, via sendrecv.
      const int n = comm.size(), r = comm.rank();
      const auto* in = static_cast<const unsigned char*>(args.in);
      auto* out = static_cast<unsigned char*>(args.out);
      std::memcpy(out + r * args.bytes, in + r * args.bytes, args.bytes);
      for (int k = 1; k < n; ++k) {
        const int to = (r + k) % n, from = (r + n - k) % n;
        comm.sendrecv(to, in + to * args.bytes, args.bytes, from, out + from * args.bytes,
                      args.bytes);
      }
    };
    reg.add(std::move(a));
  };
  const Body swap = [](DeviceContext& ctx) {
    return pswapaxes(ctx, swap_input(ctx.position(), 3), "x", 0, {}, "pow2");
  };
  EXPECT_ERROR(run_body(3, swap, add_pow2), AlgorithmPreconditionError, "pow2");
  EXPECT_ERROR(run_body(3, swap, add_pow2), AlgorithmPreconditionError, "power of two");
  const auto with_fallback = run_body(3, swap, [&](AlgorithmRegistry& reg) {
    add_pow2(reg);
    reg.set_fallback(true);
  });
  const auto direct = run_body(3, [](DeviceContext& ctx) {
    return pswapaxes(ctx, swap_input(ctx.position(), 3), "x", 0, {}, "direct");
  });
  expect_same_arrays(with_fallback, direct, "pow2 with fallback");
  // On 4 devices it runs, and equals direct.
  const auto pow2_4 = run_body(4, [](DeviceContext& ctx) {
    return pswapaxes(ctx, swap_input(ctx.position(), 4), "x", 0, {}, "pow2");
  }, add_pow2);
  const auto direct_4 = run_body(4, [](DeviceContext& ctx) {
    return pswapaxes(ctx, swap_input(ctx.position(), 4), "x", 0, {}, "direct");
  });
  expect_same_arrays(pow2_4, direct_4, "pow2 on 4");
  EXPECT_ERROR(run_body(3, [](DeviceContext& ctx) {
                 return psum_start(ctx, Array::zeros({4}, DType::kInt32), "x", {}, "hierarchical")
                     .done();
               }),
               AlgorithmPreconditionError, "hierarchical");
}

// axis_index_groups of unequal sizes with every all_reduce algorithm (psum_start)
// and every all_to_all algorithm (pswapaxes, equal groups): each equals
// direct, or is refused by name (AlgorithmPreconditionError).
TEST(AdversarialAsyncAndSwapTest, AxisIndexGroupsWithEveryAlgorithm) {
  const AxisIndexGroups unequal = {{0, 2, 3}, {1}};
  const auto sum = [&](const std::string& algo) {
    return run_body(4, [&](DeviceContext& ctx) {
      return psum_start(ctx, Array::full({5}, DType::kInt32, ctx.position() + 1), "x", unequal,
                        algo)
          .done();
    });
  };
  const auto sum_direct = sum("direct");
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(sum_direct[p].at<int32_t>({0}), p == 1 ? 2 : 1 + 3 + 4);
  }
  for (const std::string& a : names_of(Collective::kAllReduce)) {
    try {
      expect_same_arrays(sum(a), sum_direct, "psum_start unequal groups '" + a + "'");
    } catch (const AlgorithmPreconditionError& e) {
      EXPECT_THAT(std::string(e.what()), ::testing::HasSubstr(a));
    }
  }
  const AxisIndexGroups pairs = {{3, 0}, {2, 1}};
  const auto swap = [&](const std::string& algo) {
    return run_body(4, [&](DeviceContext& ctx) {
      return pswapaxes(ctx, swap_input(ctx.position(), 2), "x", 0, pairs, algo);
    });
  };
  const auto swap_direct = swap("direct");
  // Device 3 is rank 0 of {3, 0}: it gets row 0 of its own and row 0 of device 0's.
  EXPECT_EQ(swap_direct[3].at<int32_t>({0, 0}), 300);
  EXPECT_EQ(swap_direct[3].at<int32_t>({1, 0}), 0);
  for (const std::string& a : names_of(Collective::kAllToAll)) {
    expect_same_arrays(swap(a), swap_direct, "pswapaxes groups '" + a + "'");
  }
}

// Odd segment_bytes tunables (below a cache line, not a multiple of one,
// negative, huge) on every all_reduce algorithm that declares one, with
// float16 / float64 of odd counts: the sums equal direct's (small
// integers: exact in any order); tunables of an algorithm without one are
// refused by name.
TEST(AdversarialAsyncAndSwapTest, OddSegmentSizes) {
  for (const DType dtype : {DType::kFloat16, DType::kFloat64}) {
    for (int64_t count : {int64_t{33}, int64_t{1001}}) {
      const auto sum = [&](const std::string& algo, int64_t segment) {
        return run_body(
            5,
            [&](DeviceContext& ctx) {
              Array x = Array::empty({count}, DType::kInt32);
              int v = ctx.position();
              for (int32_t& e : x.mutable_span<int32_t>()) e = (v++ % 7) - 3;
              return psum_start(ctx, x.astype(dtype), "x", {}, algo).done();
            },
            [&](AlgorithmRegistry& reg) {
              if (segment != 0) reg.set_tunable(Collective::kAllReduce, algo, "segment_bytes", segment);
            });
      };
      const auto direct = sum("direct", 0);
      Runtime probe(1);
      for (const AlgorithmInfo* info : algorithm_registry(probe).list(Collective::kAllReduce)) {
        bool has = false;
        for (const Tunable& t : info->tunables) has = has || t.name == "segment_bytes";
        if (!has || info->name == "hierarchical") continue;
        for (int64_t segment : {int64_t{1}, int64_t{65}, int64_t{-5},
                                std::numeric_limits<int64_t>::max()}) {
          expect_same_arrays(sum(info->name, segment), direct,
                      info->name + " segment " + std::to_string(segment) + " " +
                          std::string(dtype_name(dtype)) + " x" + std::to_string(count));
        }
      }
    }
  }
  Runtime rt(1);
  EXPECT_ERROR(algorithm_registry(rt).set_tunable(Collective::kRaggedAllToAll, "pairwise",
                                                  "segment_bytes", 64),
               InvalidArgumentError, "segment_bytes");
  EXPECT_ERROR(algorithm_registry(rt).set_tunable(Collective::kRaggedAllToAll, "nope",
                                                  "segment_bytes", 64),
               InvalidArgumentError, "nope");
}

// pswapaxes whose swapped dimension is not the group size, or an axis out
// of range, with every all_to_all algorithm: CollectiveShapeError.
TEST(AdversarialAsyncAndSwapTest, PswapaxesShapeErrors) {
  for (const std::string& a : names_of(Collective::kAllToAll)) {
    EXPECT_ERROR(run_body(3, [&](DeviceContext& ctx) {
                   return pswapaxes(ctx, Array::zeros({4, 3}, DType::kInt32), "x", 0, {}, a);
                 }),
                 CollectiveShapeError, "pswapaxes");
    EXPECT_ERROR(run_body(3, [&](DeviceContext& ctx) {
                   return pswapaxes(ctx, Array::zeros({3, 3}, DType::kInt32), "x", 2, {}, a);
                 }),
                 CollectiveShapeError, "");
    EXPECT_ERROR(run_body(3, [&](DeviceContext& ctx) {
                   return pswapaxes(ctx, Array::zeros({3, 3}, DType::kInt32), "x", -7, {}, a);
                 }),
                 CollectiveShapeError, "");
  }
}

// pbroadcast_start with a source outside the group, with an algorithm.
TEST(AdversarialAsyncAndSwapTest, BroadcastSourceOutOfRange) {
  for (const std::string& a : names_of(Collective::kBroadcast)) {
    for (int source : {-1, 3, 1 << 30}) {
      EXPECT_ERROR(run_body(3, [&](DeviceContext& ctx) {
                     return pbroadcast_start(ctx, Array::zeros({4}, DType::kInt32), "x", source, a)
                         .done();
                   }),
                   InvalidArgumentError, std::to_string(source));
    }
  }
}

// Members asking for different algorithms: CollectiveMismatchError, no hang.
TEST(AdversarialAsyncAndSwapTest, MismatchedChoicesAcrossMembers) {
  EXPECT_ERROR(run_body(4, [](DeviceContext& ctx) {
                 return pswapaxes(ctx, swap_input(ctx.position(), 4), "x", 0, {},
                                  ctx.position() == 3 ? "bruck" : "pairwise");
               }),
               CollectiveMismatchError, "");
  EXPECT_ERROR(run_body(4, [](DeviceContext& ctx) {
                 return psum_start(ctx, Array::zeros({8}, DType::kInt32), "x", {},
                                   ctx.position() == 0 ? "ring" : "rabenseifner")
                     .done();
               }),
               CollectiveMismatchError, "");
  EXPECT_ERROR(run_body(4, [](DeviceContext& ctx) {
                 return pbroadcast_start(ctx, Array::zeros({8}, DType::kInt32), "x", 1,
                                         ctx.position() == 2 ? "binomial_tree" : "direct")
                     .done();
               }),
               CollectiveMismatchError, "");
  // Two pending handles with different algorithms on the same group, issued
  // in the same order everywhere: both fine.
  const auto results = run_body(3, [](DeviceContext& ctx) {
    const Array x = Array::full({5}, DType::kInt32, ctx.position() + 1);
    Pending a = psum_start(ctx, x, "x", {}, "ring");
    Pending b = pbroadcast_start(ctx, x, "x", 2, "binomial_tree");
    Pending c = psum_start(ctx, x, "x", {}, "recursive_doubling");
    Array sb = b.done(), sc = c.done(), sa = a.done();
    EXPECT_ERROR(a.done(), RuntimeUsageError, "");
    return concatenate({sa, sb, sc}, 0);
  });
  for (const Array& r : results) {
    EXPECT_TRUE(array_equal(r, Array::from_values<int32_t>(
                                   {15}, {6, 6, 6, 6, 6, 3, 3, 3, 3, 3, 6, 6, 6, 6, 6})))
        << r.to_string();
  }
}

// ---------------------------------------------------------------------------
// psend / precv mixed with algorithms
// ---------------------------------------------------------------------------

// Device 0 psends 8 messages (a full link) to device 1, both run a psum with
// an algorithm (the collective lane), then device 0 psends 4 more; device 1
// then receives all 12 in order. Every all_reduce algorithm.
TEST(AdversarialSendRecvMixTest, MessagesAroundAlgorithms) {
  for (const std::string& algo : names_of(Collective::kAllReduce)) {
    if (algo == "hierarchical") continue;
    for (int64_t width : {int64_t{1}, int64_t{100}}) {  // inline vs not
      std::vector<Array> got;
      std::vector<int> sums(3, 0);
      Runtime rt(3, with_timeout());
      rt.launch(Mesh::make({{"x", 3}}), [&](DeviceContext& ctx) {
        const int p = ctx.position();
        if (p == 0) {
          for (int i = 0; i < 8; ++i) {
            psend(ctx, Array::full({width}, DType::kInt32, i), "x", {{0, 1}});
          }
        }
        const Array s = psum(ctx, Array::full({7}, DType::kInt32, p + 1), "x", {}, algo);
        sums[p] = s.at<int32_t>({6});
        if (p == 0) {
          for (int i = 8; i < 12; ++i) {
            psend(ctx, Array::full({width}, DType::kInt32, i), "x", {{0, 1}});
          }
        }
        if (p == 1) {
          for (int i = 0; i < 12; ++i) {
            got.push_back(precv(ctx, Token{}, {width}, DType::kInt32, "x", {{0, 1}}));
          }
        }
      });
      EXPECT_EQ(sums, std::vector<int>(3, 6)) << algo;
      ASSERT_EQ(got.size(), 12u);
      for (int i = 0; i < 12; ++i) {
        EXPECT_TRUE(array_equal(got[i], Array::full({width}, DType::kInt32, i)))
            << algo << " message " << i;
      }
    }
  }
}

// Device 0 psends 9 messages before the psum (the 9th waits for a free
// slot), device 1 enters the psum first and receives afterwards: the user's
// deadlock, reported as DeadlockError, not a hang.
TEST(AdversarialSendRecvMixTest, FullLinkBeforeAnAlgorithmIsADeadlock) {
  for (const std::string& algo : {"ring", "direct", "recursive_doubling"}) {
    Runtime rt(2, with_timeout());
    EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                           [&](DeviceContext& ctx) {
                             if (ctx.position() == 0) {
                               for (int i = 0; i < 9; ++i) {
                                 psend(ctx, Array::full({4}, DType::kInt32, i), "x", {{0, 1}});
                               }
                             }
                             psum(ctx, Array::full({4}, DType::kInt32, 1), "x", {}, algo);
                           }),
                 DeadlockError, "psend");
  }
}

// A user algorithm's collective-lane transfers between two devices do not
// consume (or get confused with) psend messages queued on the same pair.
TEST(AdversarialSendRecvMixTest, LanesDoNotMix) {
  Runtime rt(2, with_timeout());
  std::vector<Array> got;
  std::vector<uint64_t> lane(2, 0);
  Algorithm<AllReduceArgs> a;
  a.name = "lanes";
  a.description = "exchanges one word";
  a.cost_formula = "α";
  a.cost = [](const CallShape&) { return CostTerms{1, 0, 0}; };
  a.run = [&](Communicator& comm, const AllReduceArgs& args) {
    const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
    std::memcpy(args.out, args.in, bytes);
    const uint64_t mine = 0xABCD0000u + comm.rank();
    uint64_t theirs = 0;
    comm.sendrecv(1 - comm.rank(), &mine, sizeof mine, 1 - comm.rank(), &theirs, sizeof theirs);
    lane[comm.rank()] = theirs;
  };
  algorithm_registry(rt).add(std::move(a));
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    for (int i = 0; i < 5; ++i) {
      psend(ctx, Array::full({3}, DType::kInt64, 10 * p + i), "x", {{0, 1}, {1, 0}});
    }
    psum(ctx, Array::full({2}, DType::kInt32, 1), "x", {}, "lanes");
    if (p == 1) {
      for (int i = 0; i < 5; ++i) {
        got.push_back(precv(ctx, Token{}, {3}, DType::kInt64, "x", {{0, 1}, {1, 0}}));
      }
    } else {
      for (int i = 0; i < 5; ++i) {
        const Array m = precv(ctx, Token{}, {3}, DType::kInt64, "x", {{0, 1}, {1, 0}});
        EXPECT_TRUE(array_equal(m, Array::full({3}, DType::kInt64, 10 + i)));
      }
    }
  });
  EXPECT_EQ(lane[0], 0xABCD0001u);
  EXPECT_EQ(lane[1], 0xABCD0000u);
  ASSERT_EQ(got.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(array_equal(got[i], Array::full({3}, DType::kInt64, i)));
}

}  // namespace
}  // namespace meshsim::adversarial_api_test
