#include "meshsim/mesh/partition_spec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::partition_spec_test {
namespace {

using AxisList = PartitionSpec::AxisList;

// Expects `stmt` to throw `Type` whose what() contains `needle`.

struct SpecCase {
  PartitionSpec spec;
  std::vector<AxisList> entries;
  AxisList mentioned;
  std::string text;
};

class SpecSyntaxTest : public ::testing::TestWithParam<SpecCase> {};

TEST_P(SpecSyntaxTest, EntriesAndText) {
  const SpecCase& c = GetParam();
  EXPECT_EQ(c.spec.size(), static_cast<int>(c.entries.size()));
  EXPECT_EQ(c.spec.entries(), c.entries);
  for (int d = 0; d < c.spec.size(); ++d) EXPECT_EQ(c.spec.dim(d), c.entries[d]);
  EXPECT_EQ(c.spec.dim(c.spec.size()), AxisList{});  // past the end: unsharded
  EXPECT_EQ(c.spec.mentioned_axes(), c.mentioned);
  EXPECT_EQ(c.spec.to_string(), c.text);
  EXPECT_EQ(c.spec, PartitionSpec(c.entries));
}

INSTANTIATE_TEST_SUITE_P(
    Specs, SpecSyntaxTest,
    ::testing::Values(
        SpecCase{P{}, {}, {}, "PartitionSpec()"},
        SpecCase{P{"x"}, {{"x"}}, {"x"}, "PartitionSpec('x')"},
        SpecCase{P{nullptr, "y"}, {{}, {"y"}}, {"y"}, "PartitionSpec(None, 'y')"},
        SpecCase{P{{"x", "y"}}, {{"x", "y"}}, {"x", "y"}, "PartitionSpec(('x', 'y'))"},
        SpecCase{P{"x", nullptr, {"x", "y"}},
                 {{"x"}, {}, {"x", "y"}},
                 {"x", "x", "y"},
                 "PartitionSpec('x', None, ('x', 'y'))"},
        SpecCase{P{"x", {}, "y"}, {{"x"}, {}, {"y"}}, {"x", "y"}, "PartitionSpec('x', None, 'y')"},
        SpecCase{P{std::string("y"), AxisList{"z", "x"}},
                 {{"y"}, {"z", "x"}},
                 {"y", "z", "x"},
                 "PartitionSpec('y', ('z', 'x'))"}));

TEST(PartitionSpecTest, EqualityIsEntryByEntry) {
  EXPECT_EQ(P{"x"}, P{std::string("x")});
  EXPECT_EQ((P{{"x"}}), P{"x"});
  EXPECT_NE((P{"x", "y"}), (P{{"x", "y"}}));
  EXPECT_NE((P{"x", nullptr}), P{"x"});
  EXPECT_EQ((P{"x", nullptr, {}}).normalized(), P{"x"});
  EXPECT_EQ((P{nullptr}).normalized(), P{});
}

TEST(PartitionSpecTest, ValidSpecsPass) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_NO_THROW(P{}.validate(mesh, 0));
  EXPECT_NO_THROW((P{"x", "y"}).validate(mesh, 2));
  EXPECT_NO_THROW((P{{"y", "x"}}).validate(mesh, 3));
  EXPECT_NO_THROW((P{nullptr, nullptr}).validate(mesh, 2));
}

TEST(PartitionSpecErrorTest, UnknownAxis) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR((P{"z", nullptr}).validate(mesh, 2), UnknownAxisError,
               "unknown axis 'z' in PartitionSpec('z', None); mesh axes are (x=4, y=2)");
}

TEST(PartitionSpecErrorTest, AxisUsedTwice) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR((P{"x", {"y", "x"}}).validate(mesh, 2), DuplicateAxisError,
               "axis 'x' is used twice in PartitionSpec('x', ('y', 'x'))");
  EXPECT_ERROR((P{{"y", "y"}}).validate(mesh, 1), DuplicateAxisError, "axis 'y' is used twice");
}

TEST(PartitionSpecErrorTest, LongerThanRank) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR((P{"x", nullptr, "y"}).validate(mesh, 2), SpecRankError,
               "PartitionSpec('x', None, 'y') has 3 entries but the array has rank 2");
  EXPECT_ERROR((P{"x"}).validate(mesh, 0), SpecRankError,
               "PartitionSpec('x') has 1 entry but the array has rank 0");
}

TEST(PartitionSpecErrorTest, NegativeDim) {
  EXPECT_ERROR(P{"x"}.dim(-1), InvalidArgumentError, "negative dimension -1");
}

}  // namespace
}  // namespace meshsim::partition_spec_test
