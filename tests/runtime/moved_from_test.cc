// Value types of the runtime layer, moved from: those with invariants keep
// their value (they are copied where moved from); those that own a state a
// copy cannot share (a plan) raise a clear error on any use.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/mesh/sharding.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/drivers/plan.h"
#include "meshsim/runtime/drivers/sharded_array.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/kernel_spec.h"
#include "meshsim/runtime/time/callback_model.h"
#include "support/expect_error.h"

namespace meshsim::runtime_moved_from_test {
namespace {

// NOLINTBEGIN(bugprone-use-after-move): using the moved-from objects is the point.

TEST(MovedFromTest, AxisNamesKeepTheirNamesPastTheInlineOnes) {
  const std::vector<std::string> eight{"a", "b", "c", "d", "e", "f", "g", "h"};
  AxisNames names(eight);
  const AxisNames kept = std::move(names);
  EXPECT_EQ(names.size(), 8);
  EXPECT_EQ(names.to_vector(), eight);
  EXPECT_EQ(names.to_string(), kept.to_string());
}

TEST(MovedFromTest, ALaunchOnAMovedFromMeshRunsOnItsDevices) {
  Runtime rt(4);
  Mesh mesh = Mesh::make({{"x", 4}});
  const Mesh kept = std::move(mesh);
  std::vector<int> ran(4, 0);
  rt.launch(mesh, [&](DeviceContext& ctx) { ran[ctx.position()] = 1; });
  EXPECT_EQ(ran, (std::vector<int>{1, 1, 1, 1}));
}

TEST(MovedFromTest, BufferRefsAndSpecsKeepTheirDeclarations) {
  KernelSpec spec("k");
  BufferRef ref = spec.buffer({16}, DType::kFloat32);
  spec.dma_semaphore();
  const BufferRef kept_ref = std::move(ref);
  EXPECT_EQ(ref.to_string(), "buffer 0 bytes [0, 64) float32(16)");
  EXPECT_EQ(ref.nbytes(), kept_ref.nbytes());
  const KernelSpec kept_spec = std::move(spec);
  EXPECT_EQ(spec.name(), "k");
  EXPECT_EQ(spec.buffers().size(), 1u);
  EXPECT_EQ(spec.dma_semaphores(), 1);
}

TEST(MovedFromTest, DeviceErrorStillRethrowsItsOriginal) {
  Runtime rt(2);
  try {
    rt.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
      if (ctx.device_id() == 1) throw std::runtime_error("user");
    });
    FAIL() << "expected DeviceError";
  } catch (DeviceError& e) {
    const DeviceError kept = std::move(e);
    EXPECT_STREQ(e.what(), "device 1: std::runtime_error: user");
    EXPECT_EQ(e.type_name(), "std::runtime_error");
    EXPECT_THROW(e.rethrow_original(), std::runtime_error);
  }
}

TEST(MovedFromTest, CallbackModelStillPrices) {
  CallbackModel model([](const Transfer& t) { return t.departure + 2.0; });
  CallbackModel kept = std::move(model);
  EXPECT_EQ(model.arrival({0, 1, 8, 1.0}), 3.0);
  EXPECT_EQ(kept.arrival({0, 1, 8, 1.0}), 3.0);
}

TEST(MovedFromTest, APlanMovedFromIsAnErrorOnEveryUse) {
  Runtime rt(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  ShardMapPlan plan(rt, mesh, [](DeviceContext&, const Array& x) { return x; }, {P{"x"}},
                    {P{"x"}});
  const ShardMapPlan kept = std::move(plan);
  const ShardedArray x = device_put(Array::iota({4}, DType::kInt32), NamedSharding(mesh, P{"x"}));
  const std::string needle = "ShardMapPlan: used a moved-from plan";
  EXPECT_ERROR(plan.stats(), InvalidArgumentError, needle);
  EXPECT_ERROR(plan.mesh(), InvalidArgumentError, needle);
  EXPECT_ERROR(plan.abstract_mesh(), InvalidArgumentError, needle);
  EXPECT_ERROR(plan({x}), InvalidArgumentError, needle);
  EXPECT_TRUE(array_equal(kept({x})[0].gather(), Array::iota({4}, DType::kInt32)));
  ShardedArray moved = x;
  const ShardedArray taken = std::move(moved);
  EXPECT_ERROR(moved.shape(), InvalidArgumentError,
               "used a default-constructed or moved-from ShardedArray");
}

// NOLINTEND(bugprone-use-after-move)

}  // namespace
}  // namespace meshsim::runtime_moved_from_test
