#include "meshsim/mesh/mesh.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::mesh_test {
namespace {

// Expects `stmt` to throw `Type` whose what() contains `needle`.

TEST(MeshTest, DefaultIdsAreRowMajor) {
  const Mesh mesh = Mesh::make({{"x", 2}, {"y", 3}});
  EXPECT_EQ(mesh.abstract_mesh(), AbstractMesh({{"x", 2}, {"y", 3}}));
  EXPECT_EQ(mesh.size(), 6);
  EXPECT_EQ(mesh.device_ids(), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(mesh.device_at(4), 4);
  EXPECT_EQ(mesh.position_of(5), 5);
  EXPECT_EQ(mesh.coords_of_device(5), (std::vector<int>{1, 2}));
  EXPECT_EQ(mesh.to_string(), "Mesh(x=2, y=3)");
  EXPECT_EQ(mesh, Mesh(AbstractMesh({{"x", 2}, {"y", 3}}), {0, 1, 2, 3, 4, 5}));
}

TEST(MeshTest, ExplicitIds) {
  const Mesh mesh(AbstractMesh({{"x", 2}, {"y", 2}}), {4, 5, 6, 7});
  EXPECT_EQ(mesh.device_at(2), 6);
  EXPECT_EQ(mesh.position_of(7), 3);
  EXPECT_EQ(mesh.find_position(0), std::nullopt);
  EXPECT_EQ(mesh.coords_of_device(6), (std::vector<int>{1, 0}));
  EXPECT_EQ(mesh.to_string(), "Mesh(x=2, y=2; devices=[4, 5, 6, 7])");
  EXPECT_NE(mesh, Mesh::make({{"x", 2}, {"y", 2}}));
  EXPECT_NE(mesh, Mesh(AbstractMesh({{"x", 4}}), {4, 5, 6, 7}));
}

// A device's coordinates are those of the position it is placed at.
struct PlacementCase {
  std::vector<std::pair<std::string, int>> axes;
  std::vector<int> ids;
  int device;
  int position;
  std::vector<int> coords;
};

class PlacementTest : public ::testing::TestWithParam<PlacementCase> {};

TEST_P(PlacementTest, KnownAnswer) {
  const PlacementCase& c = GetParam();
  const Mesh mesh(AbstractMesh(c.axes), c.ids);
  EXPECT_EQ(mesh.find_position(c.device), c.position);
  EXPECT_EQ(mesh.position_of(c.device), c.position);
  EXPECT_EQ(mesh.device_at(c.position), c.device);
  EXPECT_EQ(mesh.coords_of_device(c.device), c.coords);
}

INSTANTIATE_TEST_SUITE_P(
    Meshes, PlacementTest,
    ::testing::Values(PlacementCase{{{"x", 4}}, {3, 2, 1, 0}, 3, 0, {0}},
                      PlacementCase{{{"x", 4}}, {10, 20, 30, 40}, 30, 2, {2}},
                      PlacementCase{{{"x", 2}, {"y", 2}}, {0, 2, 1, 3}, 2, 1, {0, 1}},
                      PlacementCase{{{"x", 2}, {"y", 2}}, {0, 2, 1, 3}, 1, 2, {1, 0}},
                      PlacementCase{
                          {{"a", 2}, {"b", 1}, {"c", 3}}, {9, 8, 7, 6, 5, 4}, 4, 5, {1, 0, 2}}));

TEST(MeshErrorTest, WrongDeviceCount) {
  EXPECT_ERROR(Mesh(AbstractMesh({{"x", 2}, {"y", 2}}), {0, 1, 2}), MeshError, "expected 4, got 3");
}

TEST(MeshErrorTest, NegativeDeviceId) {
  EXPECT_ERROR(Mesh(AbstractMesh({{"x", 2}}), {0, -1}), MeshError,
               "negative device id -1 at mesh position 1");
}

// A concrete mesh beyond kMaxDevices is refused before its tables are
// built (2^31 devices used to take every byte of memory); an abstract one
// of that size is only a shape.
TEST(MeshErrorTest, TooManyDevices) {
  EXPECT_ERROR(Mesh::make({{"x", 2147483647}}), MeshError,
               "AbstractMesh(x=2147483647) has 2147483647 devices; a concrete mesh has at most "
               "4194304");
  EXPECT_ERROR(Mesh(AbstractMesh({{"x", Mesh::kMaxDevices + 1}}), {}), MeshError,
               "a concrete mesh has at most");
  EXPECT_EQ(AbstractMesh({{"x", 2147483647}}).size(), 2147483647);
}

TEST(MeshErrorTest, DuplicateDeviceId) {
  EXPECT_ERROR(Mesh(AbstractMesh({{"x", 4}}), {5, 6, 7, 6}), MeshError,
               "device id 6 appears twice, at mesh positions 1 and 3");
}

TEST(MeshErrorTest, EmptyMesh) { EXPECT_ERROR(Mesh::make({}), MeshError, "no"); }

TEST(MeshErrorTest, DeviceNotInMesh) {
  const Mesh mesh(AbstractMesh({{"x", 2}}), {4, 5});
  EXPECT_ERROR(mesh.position_of(9), MeshError, "device 9 is not in Mesh(x=2; devices=[4, 5])");
  EXPECT_ERROR(mesh.coords_of_device(0), MeshError, "device 0");
}

TEST(MeshErrorTest, PositionOutOfRange) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  EXPECT_ERROR(mesh.device_at(2), InvalidArgumentError, "position 2 is out of range [0, 2)");
}

}  // namespace
}  // namespace meshsim::mesh_test
