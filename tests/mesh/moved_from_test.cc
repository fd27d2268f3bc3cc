// Value types of the mesh layer, moved from: each keeps a value its
// constructor accepts (they are copied where moved from), so every later use
// gives the original's answers instead of reading emptied containers under
// counts that survived the move.

#include <gtest/gtest.h>

#include <utility>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/topology/topology.h"

namespace meshsim::moved_from_test {
namespace {

// NOLINTBEGIN(bugprone-use-after-move): using the moved-from objects is the point.

TEST(MovedFromTest, AbstractMeshKeepsItsAxes) {
  AbstractMesh a({{"x", 4}, {"y", 2}});
  const AbstractMesh b = std::move(a);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.num_axes(), 2);
  EXPECT_EQ(a.size(), 8);
  EXPECT_EQ(a.coords(5), (std::vector<int>{2, 1}));
  AbstractMesh c({{"z", 3}});
  c = std::move(a);
  EXPECT_EQ(c, b);
  EXPECT_EQ(a.to_string(), "AbstractMesh(x=4, y=2)");
}

TEST(MovedFromTest, MeshKeepsItsDevices) {
  Mesh m(AbstractMesh({{"x", 4}}), {7, 5, 3, 1});
  const Mesh n = std::move(m);
  EXPECT_EQ(m, n);
  EXPECT_EQ(m.size(), 4);
  EXPECT_EQ(m.device_ids().size(), 4u);
  EXPECT_EQ(m.device_at(3), 1);
  EXPECT_EQ(m.position_of(5), 1);
  Mesh k = Mesh::make({{"y", 2}});
  k = std::move(m);
  EXPECT_EQ(k, n);
  EXPECT_EQ(m.to_string(), "Mesh(x=4; devices=[7, 5, 3, 1])");
}

TEST(MovedFromTest, TopologyKeepsItsRoutesAndLinks) {
  Topology t({{DimensionKind::ring, 4, 1e9, 1e-6}});
  const Topology kept = std::move(t);
  EXPECT_EQ(t.num_dimensions(), 1);
  EXPECT_EQ(t.num_nodes(), 4);
  EXPECT_EQ(t.num_links(), 4);
  EXPECT_EQ(t.route(0, 2).size(), 2u);  // forward-only ring: 0 -> 1 -> 2
  EXPECT_EQ(t.link(0).from, kept.link(0).from);
  EXPECT_EQ(t.to_string(), kept.to_string());
}

TEST(MovedFromTest, ErrorsKeepTheirMessageAndDevice) {
  ShapeError e("bad shape");
  e.set_device(3);
  const ShapeError kept = std::move(e);
  EXPECT_STREQ(e.what(), "device 3: bad shape");
  EXPECT_EQ(e.device(), 3);
  EXPECT_STREQ(kept.what(), "device 3: bad shape");
}

// NOLINTEND(bugprone-use-after-move)

}  // namespace
}  // namespace meshsim::moved_from_test
