// What the public Runtime surface does not offer (issue 9, item 2): a launch
// on a MeshState, which another runtime could have interned, is internal.

#include <gtest/gtest.h>

#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim::runtime_api_test {
namespace {

template <class R>
concept LaunchesOnMeshState = requires(R& rt, MeshState& state) {
  rt.launch(state, [](DeviceContext&) {});
};
template <class R>
concept InternsMeshes = requires(R& rt, const Mesh& mesh) { rt.intern(mesh); };

static_assert(!LaunchesOnMeshState<Runtime>, "launch(MeshState&) must stay internal");
static_assert(!InternsMeshes<Runtime>, "intern() must stay internal");

TEST(RuntimeApi, LaunchesOnlyOnMeshes) {
  Runtime rt(2);
  int ran = 0;
  rt.launch(Mesh::make({{"x", 1}}), [&](DeviceContext&) { ++ran; });
  EXPECT_EQ(ran, 1);
}

// Destroying a Runtime from its own device's body would wait for itself:
// it terminates with a message instead of hanging (a destructor cannot
// throw).
TEST(RuntimeApiDeathTest, DestroyingTheRuntimeFromItsOwnDeviceTerminates) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto* rt = new Runtime(1);
        rt->launch(Mesh::make({{"x", 1}}), [&](DeviceContext&) { delete rt; });
      },
      "Runtime destroyed from the body of its own device 0");
}

// Likewise from the body of another runtime's device, in a launch made in a
// launch of the runtime destroyed (which waits for that body).
TEST(RuntimeApiDeathTest, DestroyingTheRuntimeFromALaunchNestedInItsOwnTerminates) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto* a = new Runtime(1);
        Runtime b(1);
        a->launch(Mesh::make({{"x", 1}}), [&](DeviceContext&) {
          b.launch(Mesh::make({{"y", 1}}), [&](DeviceContext&) { delete a; });
        });
      },
      "Runtime destroyed from the body of device 0 of another runtime, in a launch made inside "
      "a launch of the runtime destroyed");
}

}  // namespace
}  // namespace meshsim::runtime_api_test
