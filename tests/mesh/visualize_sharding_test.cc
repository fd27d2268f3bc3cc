// visualize_sharding: the exact pictures for the layouts users look at most
// (rows, columns, both, replicated, 1-D, custom device ids) and its errors.

#include "meshsim/mesh/visualize_sharding.h"

#include <gtest/gtest.h>

#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"

namespace meshsim::visualize_sharding_test {
namespace {

std::string picture(const Mesh& mesh, const PartitionSpec& spec, std::vector<int64_t> shape) {
  return visualize_sharding(NamedSharding(mesh, spec), shape);
}

const Mesh kMesh42 = Mesh::make({{"x", 4}, {"y", 2}});

TEST(VisualizeSharding, RowsOverXReplicatedOverY) {
  EXPECT_EQ(picture(kMesh42, P{"x", nullptr}, {16, 8}),
            "┌─────┐\n"
            "│ 0,1 │\n"
            "├─────┤\n"
            "│ 2,3 │\n"
            "├─────┤\n"
            "│ 4,5 │\n"
            "├─────┤\n"
            "│ 6,7 │\n"
            "└─────┘\n");
}

TEST(VisualizeSharding, RowsAndColumns) {
  EXPECT_EQ(picture(Mesh::make({{"x", 2}, {"y", 2}}), P{"x", "y"}, {4, 4}),
            "┌───┬───┐\n"
            "│ 0 │ 1 │\n"
            "├───┼───┤\n"
            "│ 2 │ 3 │\n"
            "└───┴───┘\n");
}

TEST(VisualizeSharding, ColumnsOverBothAxes) {
  // Dimension 1 over (y, x): block i is held by the device with y*4 + x = i.
  EXPECT_EQ(picture(kMesh42, P{nullptr, {"y", "x"}}, {2, 16}),
            "┌───┬───┬───┬───┬───┬───┬───┬───┐\n"
            "│ 0 │ 2 │ 4 │ 6 │ 1 │ 3 │ 5 │ 7 │\n"
            "└───┴───┴───┴───┴───┴───┴───┴───┘\n");
}

TEST(VisualizeSharding, FullyReplicatedIsOneBlock) {
  EXPECT_EQ(picture(kMesh42, P{}, {3, 3}),
            "┌─────┐\n"
            "│ 0-7 │\n"
            "└─────┘\n");
}

TEST(VisualizeSharding, OneDimensionalArrayIsOneRow) {
  EXPECT_EQ(picture(kMesh42, P{"y"}, {6}),
            "┌─────────┬─────────┐\n"
            "│ 0,2,4,6 │ 1,3,5,7 │\n"
            "└─────────┴─────────┘\n");
}

TEST(VisualizeSharding, NamesTheMeshDevices) {
  const Mesh mesh(AbstractMesh({{"x", 2}}), {6, 3});
  EXPECT_EQ(picture(mesh, P{"x"}, {2}),
            "┌───┬───┐\n"
            "│ 6 │ 3 │\n"
            "└───┴───┘\n");
}

TEST(VisualizeSharding, Errors) {
  EXPECT_THROW(picture(kMesh42, P{"x"}, {4, 4, 4}), ShapeError);
  EXPECT_THROW(picture(kMesh42, P{"x"}, {6, 4}), ShapeError);  // 6 rows over 4 devices
  EXPECT_THROW(picture(kMesh42, P{"z"}, {8}), Error);          // no axis z
}

TEST(FormatDeviceList, ShortensRuns) {
  EXPECT_EQ(format_device_list({}), "");
  EXPECT_EQ(format_device_list({5}), "5");
  EXPECT_EQ(format_device_list({1, 0}), "0,1");
  EXPECT_EQ(format_device_list({6, 0, 1, 2, 3}), "0-3,6");
  EXPECT_EQ(format_device_list({0, 2, 3, 4, 9, 10}), "0,2-4,9,10");
}

}  // namespace
}  // namespace meshsim::visualize_sharding_test
