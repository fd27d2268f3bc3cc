// Mesh positions on topology nodes: the default mapping (last axis on the
// lowest dimensions, identity when sizes line up), explicit mappings, axes
// spanning several dimensions, and size mismatches naming axis and dimension.

#include "meshsim/mesh/topology/topology_mapping.h"

#include <gtest/gtest.h>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/topology/topology_spec.h"
#include "support/expect_error.h"

namespace meshsim::topology_mapping_test {
namespace {

const char* kTorus444 = "torus3d:4x4x4:bw=1GB/s,lat=1us";

TEST(TopologyMapping, DefaultMapsACubeMeshOntoA3DTorusAsTheIdentity) {
  AbstractMesh mesh({{"x", 4}, {"y", 4}, {"z", 4}});
  Topology torus = parse_topology_spec(kTorus444);
  TopologyMapping mapping(mesh, torus);
  EXPECT_EQ(mapping.dimensions_of_axis(0), std::vector<int>{2});
  EXPECT_EQ(mapping.dimensions_of_axis(2), std::vector<int>{0});
  for (int p = 0; p < 64; ++p) EXPECT_EQ(mapping.node(p), p);
  // Neighbours along z (the fastest mesh axis) are one hop apart in dimension 0.
  std::vector<int> c{1, 2, 3};
  int position = mesh.position(c);
  auto route = torus.route(mapping.node(position), mapping.node(position - 1));
  ASSERT_EQ(route.size(), 1u);
  EXPECT_EQ(route[0].dimension, 0);
}

TEST(TopologyMapping, DefaultPutsTheFastestAxisOnTheInnermostDimension) {
  // 2 data-parallel replicas of 4-way tensor parallelism on servers of 4.
  AbstractMesh mesh({{"dp", 2}, {"tp", 4}});
  Topology t = parse_topology_spec("ring:4:bw=400GB/s,lat=100ns;switch:2:bw=50GB/s,lat=2us");
  TopologyMapping mapping(mesh, t);
  EXPECT_EQ(mapping.dimensions_of_axis(1), std::vector<int>{0});
  EXPECT_EQ(mapping.dimensions_of_axis(0), std::vector<int>{1});
  std::vector<int> c{1, 2};
  EXPECT_EQ(mapping.node(mesh.position(c)), 2 + 4 * 1);
}

TEST(TopologyMapping, AnAxisSpansSeveralDimensions) {
  AbstractMesh mesh({{"i", 16}});
  TopologyMapping mapping(mesh, parse_topology_spec("torus2d:4x4:bw=1GB/s,lat=1us"));
  EXPECT_EQ(mapping.dimensions_of_axis(0), (std::vector<int>{0, 1}));
  for (int p = 0; p < 16; ++p) EXPECT_EQ(mapping.node(p), p);
}

TEST(TopologyMapping, SizeOneAxesAndDimensionsTakeNothing) {
  AbstractMesh mesh({{"a", 1}, {"b", 4}});
  TopologyMapping mapping(mesh,
                          parse_topology_spec("ring:4:bw=1GB/s,lat=1us;switch:1:bw=1GB/s,lat=1us"));
  EXPECT_TRUE(mapping.dimensions_of_axis(0).empty());
  EXPECT_EQ(mapping.node(3), 3);
}

TEST(TopologyMapping, ExplicitMappingPermutesDimensions) {
  // x on dimension 0 (fastest node coordinate), y on dimension 1: position
  // (x, y) = 2x + y sits on node x + 4y.
  AbstractMesh mesh({{"x", 4}, {"y", 2}});
  Topology t = parse_topology_spec("ring:4:bw=1GB/s,lat=1us;ring:2:bw=1GB/s,lat=1us");
  TopologyMapping mapping(mesh, t, {{"y", {1}}, {"x", {0}}});
  for (int x = 0; x < 4; ++x) {
    for (int y = 0; y < 2; ++y) EXPECT_EQ(mapping.node(2 * x + y), x + 4 * y);
  }
}

TEST(TopologyMapping, RejectsSizesThatDoNotMatch) {
  Topology torus = parse_topology_spec(kTorus444);
  EXPECT_ERROR(TopologyMapping(AbstractMesh({{"x", 4}, {"y", 4}, {"z", 8}}), torus), TopologyError,
               "mesh axis 'z' (size 8) does not fit topology dimensions [0, 1] of sizes [4, 4] "
               "(product 16)");
  EXPECT_ERROR(TopologyMapping(AbstractMesh({{"x", 2}, {"y", 4}, {"z", 4}}), torus), TopologyError,
               "mesh axis 'x' (size 2) does not fit topology dimension 2 of size 4 (product 4)");
  EXPECT_ERROR(TopologyMapping(AbstractMesh({{"x", 4}, {"y", 16}, {"z", 4}}), torus), TopologyError,
               "mesh axis 'x' (size 4) does not fit the topology: no dimensions are left");
  EXPECT_ERROR(TopologyMapping(AbstractMesh({{"x", 4}, {"y", 4}}), torus), TopologyError,
               "topology dimension 2 (size 4) is not mapped to any axis of mesh "
               "AbstractMesh(x=4, y=4); the topology has 64 nodes, the mesh 16 positions");
}

TEST(TopologyMapping, RejectsBadExplicitMappings) {
  AbstractMesh mesh({{"x", 4}, {"y", 2}});
  Topology t = parse_topology_spec("ring:4:bw=1GB/s,lat=1us;ring:2:bw=1GB/s,lat=1us");
  EXPECT_ERROR(TopologyMapping(mesh, t, {{"x", {1}}, {"y", {0}}}), TopologyError,
               "mesh axis 'x' (size 4) does not match topology dimension 1 of size 2 (product 2)");
  EXPECT_ERROR(TopologyMapping(mesh, t, {{"x", {0}}}), TopologyError,
               "mesh axis 'y' (size 2) is not mapped");
  EXPECT_ERROR(TopologyMapping(mesh, t, {{"x", {0}}, {"x", {0}}}), TopologyError,
               "mesh axis 'x' (size 4) is mapped twice");
  EXPECT_ERROR(TopologyMapping(mesh, t, {{"x", {0}}, {"y", {2}}}), TopologyError,
               "mesh axis 'y' (size 2) is mapped to dimension 2, out of range [0, 2)");
  EXPECT_ERROR(TopologyMapping(mesh, t, {{"x", {0}}, {"z", {1}}}), UnknownAxisError,
               "unknown axis 'z'");
  AbstractMesh square({{"x", 4}, {"y", 4}});
  Topology torus = parse_topology_spec("torus2d:4x4:bw=1GB/s,lat=1us");
  EXPECT_ERROR(TopologyMapping(square, torus, {{"x", {0}}, {"y", {0}}}), TopologyError,
               "topology dimension 0 is mapped to both mesh axis 'x' (size 4) and mesh axis 'y'");
}

TEST(TopologyMapping, RejectsPositionsAndAxesOutOfRange) {
  TopologyMapping mapping(AbstractMesh({{"x", 4}}), parse_topology_spec("ring:4:bw=1GB/s,lat=1us"));
  EXPECT_ERROR(mapping.node(4), InvalidArgumentError, "mesh position 4 is out of range [0, 4)");
  EXPECT_ERROR(mapping.dimensions_of_axis(1), InvalidArgumentError,
               "mesh axis index 1 is out of range [0, 1)");
}

}  // namespace
}  // namespace meshsim::topology_mapping_test
