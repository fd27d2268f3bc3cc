#include "meshsim/mesh/abstract_mesh.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::abstract_mesh_test {
namespace {

using Axes = std::vector<std::pair<std::string, int>>;

// Expects `stmt` to throw `Type` whose what() contains `needle`.

TEST(AbstractMeshTest, Accessors) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_EQ(mesh.num_axes(), 2);
  EXPECT_EQ(mesh.size(), 8);
  EXPECT_EQ(mesh.axis_names(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(mesh.axis_sizes(), (std::vector<int>{4, 2}));
  EXPECT_EQ(mesh.find_axis("y"), 1);
  EXPECT_EQ(mesh.find_axis("z"), std::nullopt);
  EXPECT_EQ(mesh.axis_position("x"), 0);
  EXPECT_EQ(mesh.axis_size("y"), 2);
  EXPECT_EQ(mesh.to_string(), "AbstractMesh(x=4, y=2)");
}

TEST(AbstractMeshTest, EqualityAndHash) {
  const AbstractMesh a({{"x", 4}, {"y", 2}});
  EXPECT_EQ(a, AbstractMesh({{"x", 4}, {"y", 2}}));
  EXPECT_EQ(a.hash(), AbstractMesh({{"x", 4}, {"y", 2}}).hash());
  EXPECT_EQ(std::hash<AbstractMesh>{}(a), a.hash());
  EXPECT_NE(a, AbstractMesh({{"y", 2}, {"x", 4}}));
  EXPECT_NE(a, AbstractMesh({{"x", 2}, {"y", 4}}));
  EXPECT_NE(a, AbstractMesh({{"x", 8}}));
}

// Known coordinates: last axis fastest.
struct CoordsCase {
  Axes axes;
  int position;
  std::vector<int> coords;
};

class CoordsTest : public ::testing::TestWithParam<CoordsCase> {};

TEST_P(CoordsTest, KnownAnswer) {
  const AbstractMesh mesh(GetParam().axes);
  EXPECT_EQ(mesh.coords(GetParam().position), GetParam().coords);
  EXPECT_EQ(mesh.position(GetParam().coords), GetParam().position);
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, CoordsTest,
    ::testing::Values(CoordsCase{{{"x", 5}}, 3, {3}},                             //
                      CoordsCase{{{"x", 4}, {"y", 2}}, 5, {2, 1}},                // 2*2+1
                      CoordsCase{{{"x", 2}, {"y", 4}}, 6, {1, 2}},                // 1*4+2
                      CoordsCase{{{"a", 2}, {"b", 3}, {"c", 4}}, 17, {1, 1, 1}},  // 12+4+1
                      CoordsCase{{{"a", 2}, {"b", 3}, {"c", 4}}, 23, {1, 2, 3}},  // last
                      CoordsCase{{{"a", 1}, {"b", 3}, {"c", 1}}, 2, {0, 2, 0}}));

// Every position round-trips, and positions enumerate coordinates in odometer
// order (last axis fastest).
class RoundTripTest : public ::testing::TestWithParam<Axes> {};

TEST_P(RoundTripTest, OdometerOrder) {
  const AbstractMesh mesh(GetParam());
  std::vector<int> expected(mesh.num_axes(), 0);
  for (int p = 0; p < mesh.size(); ++p) {
    ASSERT_EQ(mesh.coords(p), expected) << "position " << p;
    ASSERT_EQ(mesh.position(expected), p);
    for (int a = mesh.num_axes() - 1; a >= 0 && ++expected[a] == mesh.axis_sizes()[a]; --a) {
      expected[a] = 0;
    }
  }
  EXPECT_EQ(expected, std::vector<int>(mesh.num_axes(), 0));  // wrapped exactly once
}

INSTANTIATE_TEST_SUITE_P(Meshes, RoundTripTest,
                         ::testing::Values(Axes{{"x", 1}}, Axes{{"x", 7}}, Axes{{"x", 4}, {"y", 2}},
                                           Axes{{"x", 3}, {"y", 5}},
                                           Axes{{"a", 2}, {"b", 3}, {"c", 4}},
                                           Axes{{"a", 3}, {"b", 1}, {"c", 2}}));

TEST(AbstractMeshErrorTest, EmptyMesh) { EXPECT_ERROR(AbstractMesh(Axes{}), MeshError, "no"); }

TEST(AbstractMeshErrorTest, EmptyAxisName) {
  EXPECT_ERROR(AbstractMesh({{"x", 2}, {"", 2}}), MeshError, "axis 1 has an empty name");
}

TEST(AbstractMeshErrorTest, DuplicateAxis) {
  EXPECT_ERROR(AbstractMesh({{"x", 2}, {"x", 2}}), MeshError, "'x'");
}

TEST(AbstractMeshErrorTest, SizeBelowOne) {
  EXPECT_ERROR(AbstractMesh({{"x", 2}, {"y", 0}}), MeshError, "'y' has size 0");
}

TEST(AbstractMeshErrorTest, TooLarge) {
  EXPECT_ERROR(AbstractMesh({{"x", 1 << 16}, {"y", 1 << 16}}), MeshError, "'y'");
}

TEST(AbstractMeshErrorTest, PositionOutOfRange) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR(mesh.coords(8), InvalidArgumentError, "position 8 is out of range [0, 8)");
  EXPECT_ERROR(mesh.coords(-1), InvalidArgumentError, "position -1");
}

TEST(AbstractMeshErrorTest, BadCoordinates) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR(mesh.position(std::vector<int>{1}), InvalidArgumentError, "(1) have 1 entry but");
  EXPECT_ERROR(mesh.position(std::vector<int>{1, 2}), InvalidArgumentError,
               "coordinate 2 on axis 'y'");
}

TEST(AbstractMeshErrorTest, UnknownAxis) {
  const AbstractMesh mesh({{"x", 4}, {"y", 2}});
  EXPECT_ERROR(mesh.axis_position("z"), AxisError, "unknown axis 'z'; mesh axes are (x=4, y=2)");
  EXPECT_ERROR(mesh.axis_size("z"), AxisError, "'z'");
}

}  // namespace
}  // namespace meshsim::abstract_mesh_test
