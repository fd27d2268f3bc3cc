#include "meshsim/mesh/axis_groups.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::axis_groups_test {
namespace {

using Names = std::vector<std::string>;
using Groups = std::vector<std::vector<int>>;

// Expects `stmt` to throw `Type` whose what() contains `needle`.

// Only one group holding every index in order is the grouping of none.
TEST(IsOneWholeGroupTest, OnlyTheIdentityList) {
  EXPECT_TRUE(is_one_whole_group({{0, 1, 2, 3}}, 4));
  EXPECT_TRUE(is_one_whole_group({{0}}, 1));
  EXPECT_FALSE(is_one_whole_group({}, 4));
  EXPECT_FALSE(is_one_whole_group({{0, 1, 3, 2}}, 4));  // other ranks
  EXPECT_FALSE(is_one_whole_group({{0, 1, 2}}, 4));
  EXPECT_FALSE(is_one_whole_group({{0, 1}, {2, 3}}, 4));
  EXPECT_FALSE(is_one_whole_group({{0, 1, 2, 3}}, 0));  // an unknown axis
}

TEST(AxisSizeTest, ProductOfSizes) {
  const AbstractMesh mesh({{"a", 2}, {"b", 3}, {"c", 4}});
  EXPECT_EQ(axis_size(mesh, Names{}), 1);
  EXPECT_EQ(axis_size(mesh, Names{"b"}), 3);
  EXPECT_EQ(axis_size(mesh, Names{"c", "a"}), 8);
  EXPECT_EQ(axis_size(mesh, Names{"a", "b", "c"}), 24);
}

// On (i=4, j=2), position p has i = p / 2, j = p % 2.
class AxisIndexTest : public ::testing::TestWithParam<int> {
 protected:
  const AbstractMesh mesh_{{{"i", 4}, {"j", 2}}};
  int i() const { return GetParam() / 2; }
  int j() const { return GetParam() % 2; }
};

TEST_P(AxisIndexTest, MajorToMinor) {
  const int p = GetParam();
  EXPECT_EQ(axis_index(mesh_, Names{"i", "j"}, p), p);
  EXPECT_EQ(axis_index(mesh_, Names{"j", "i"}, p), j() * 4 + i());
  EXPECT_EQ(axis_index(mesh_, Names{"i"}, p), i());
  EXPECT_EQ(axis_index(mesh_, Names{"j"}, p), j());
  EXPECT_EQ(axis_index(mesh_, Names{}, p), 0);
}

INSTANTIATE_TEST_SUITE_P(Positions, AxisIndexTest, ::testing::Range(0, 8));

struct GroupsCase {
  std::vector<std::pair<std::string, int>> axes;
  Names collective;
  Groups groups;  // axis_index_groups
  bool equal_sizes;
  Groups members;  // expected, by group id then rank
};

class DeviceGroupsTest : public ::testing::TestWithParam<GroupsCase> {};

TEST_P(DeviceGroupsTest, KnownAnswer) {
  const GroupsCase& c = GetParam();
  const AbstractMesh mesh(c.axes);
  const DeviceGroups got = device_groups(mesh, c.collective, c.groups, c.equal_sizes);
  EXPECT_EQ(got.members, c.members);
  // group_of / rank_of are the inverse of members.
  ASSERT_EQ(got.group_of.size(), static_cast<size_t>(mesh.size()));
  ASSERT_EQ(got.rank_of.size(), static_cast<size_t>(mesh.size()));
  for (size_t g = 0; g < c.members.size(); ++g) {
    for (size_t r = 0; r < c.members[g].size(); ++r) {
      EXPECT_EQ(got.group_of[c.members[g][r]], static_cast<int>(g));
      EXPECT_EQ(got.rank_of[c.members[g][r]], static_cast<int>(r));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, DeviceGroupsTest,
    ::testing::Values(
        // (x=2, y=4): position = x*4 + y.
        GroupsCase{{{"x", 2}, {"y", 4}}, {"y"}, {}, true, {{0, 1, 2, 3}, {4, 5, 6, 7}}},
        GroupsCase{{{"x", 2}, {"y", 4}}, {"x"}, {}, true, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
        GroupsCase{{{"x", 2}, {"y", 4}}, {"x", "y"}, {}, true, {{0, 1, 2, 3, 4, 5, 6, 7}}},
        GroupsCase{{{"x", 2}, {"y", 4}}, {"y", "x"}, {}, true, {{0, 4, 1, 5, 2, 6, 3, 7}}},
        GroupsCase{{{"x", 2}, {"y", 4}}, {}, {}, true, {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}},
        GroupsCase{
            {{"x", 2}, {"y", 4}}, {"y"}, {{0, 1}, {2, 3}}, true, {{0, 1}, {2, 3}, {4, 5}, {6, 7}}},
        GroupsCase{
            {{"x", 2}, {"y", 4}}, {"y"}, {{0, 2}, {1, 3}}, true, {{0, 2}, {1, 3}, {4, 6}, {5, 7}}},
        // Rank follows the order inside the group, group id the order of the list.
        GroupsCase{
            {{"x", 2}, {"y", 4}}, {"y"}, {{3, 1}, {2, 0}}, true, {{3, 1}, {2, 0}, {7, 5}, {6, 4}}},
        // JAX docs: all_gather over groups [[0, 2], [1, 3]] gives index 0 [x0, x2].
        GroupsCase{{{"i", 4}}, {"i"}, {{0, 2}, {1, 3}}, true, {{0, 2}, {1, 3}}},
        GroupsCase{{{"i", 3}}, {"i"}, {{0}, {2, 1}}, false, {{0}, {2, 1}}},
        // (a=2, b=3, c=2): position = a*6 + b*2 + c; over (c, a) index = c*2 + a.
        GroupsCase{{{"a", 2}, {"b", 3}, {"c", 2}},
                   {"c", "a"},
                   {},
                   true,
                   {{0, 6, 1, 7}, {2, 8, 3, 9}, {4, 10, 5, 11}}},
        GroupsCase{{{"a", 2}, {"b", 3}, {"c", 2}},
                   {"b"},
                   {},
                   true,
                   {{0, 2, 4}, {1, 3, 5}, {6, 8, 10}, {7, 9, 11}}}));

TEST(DeviceGroupsRankTest, InterleavedGroups) {
  const DeviceGroups got =
      device_groups(AbstractMesh({{"x", 2}, {"y", 4}}), Names{"y"}, {{0, 2}, {1, 3}});
  EXPECT_EQ(got.group_of, (std::vector<int>{0, 1, 0, 1, 2, 3, 2, 3}));
  EXPECT_EQ(got.rank_of, (std::vector<int>{0, 0, 1, 1, 0, 0, 1, 1}));
}

TEST(AxisGroupsErrorTest, UnknownAxis) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR(axis_size(mesh, Names{"x", "z"}), AxisError,
               "unknown axis 'z' in axes ('x', 'z'); mesh axes are (x=4, y=2)");
  EXPECT_ERROR(axis_index(mesh, Names{"w"}, 0), AxisError, "'w'");
  EXPECT_ERROR(device_groups(mesh, Names{"q"}), AxisError, "'q'");
}

TEST(AxisGroupsErrorTest, RepeatedAxis) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR(axis_size(mesh, Names{"y", "x", "y"}), AxisError,
               "axis 'y' is listed twice in axes ('y', 'x', 'y')");
}

TEST(AxisGroupsErrorTest, PositionOutOfRange) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR(axis_index(mesh, Names{"x"}, 8), InvalidArgumentError, "position 8");
}

// Invalid axis_index_groups over y on (x=2, y=4), with the expected message.
class BadGroupsTest : public ::testing::TestWithParam<std::tuple<Groups, bool, std::string>> {};

TEST_P(BadGroupsTest, Rejected) {
  const auto& [groups, equal_sizes, needle] = GetParam();
  const AbstractMesh mesh({{"x", 2}, {"y", 4}});
  EXPECT_ERROR(validate_axis_index_groups(mesh, Names{"y"}, groups, equal_sizes), GroupError,
               needle);
  EXPECT_ERROR(device_groups(mesh, Names{"y"}, groups, equal_sizes), GroupError, needle);
  EXPECT_ERROR(device_groups(mesh, Names{"y"}, groups, equal_sizes), GroupError,
               "over axes 'y' (size 4)");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadGroupsTest,
    ::testing::Values(
        std::make_tuple(Groups{{0, 1}, {2}}, false, "index 3 is in no group"),
        std::make_tuple(Groups{{0, 1}, {1, 2, 3}}, false,
                        "index 1 appears twice, in groups 0 and 1"),
        std::make_tuple(Groups{{0, 1}, {2, 4}}, true, "index 4 in group 1 is out of range [0, 4)"),
        std::make_tuple(Groups{{0, 1}, {-1, 2, 3}}, false, "index -1 in group 1 is out of range"),
        std::make_tuple(Groups{{0, 1, 2, 3}, {}}, false, "group 1 is empty"),
        std::make_tuple(Groups{{0}, {1, 2, 3}}, true, "group 1 has 3 indices but group 0 has 1")));

}  // namespace
}  // namespace meshsim::axis_groups_test
