// The call shapes users write (issue 9, items 4 and 18): bodies kept in
// variables own their callable (no dangling reference), list parameters take
// braced lists, and a body may return one Array or a vector.

#include <gtest/gtest.h>

#include <functional>
#include <span>
#include <type_traits>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/drivers/pmap.h"
#include "meshsim/runtime/drivers/shard_map.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim::shard_map_api_test {
namespace {

// A ShardBody owns its callable: assigning a lambda to it copies the lambda,
// so nothing refers to the temporary after the statement ends.
static_assert(std::is_same_v<ShardBody,
                             std::function<std::vector<Array>(DeviceContext&, std::span<const Array>)>>);

Array arange(int64_t n) { return Array::iota({n}, DType::kInt32); }

std::vector<int32_t> values(const Array& a) {
  const auto span = a.span<int32_t>();
  return {span.begin(), span.end()};
}

TEST(ShardMapApi, BodyStoredInAVariableOwnsItsCallable) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  ShardBody body;
  {
    // The lambda and the value it captures die at the end of this scope;
    // under ASan a non-owning body would read freed stack memory here.
    const std::vector<int32_t> offset = {100};
    body = [offset](DeviceContext& ctx, std::span<const Array> in) {
      Array out = Array::full({1}, DType::kInt32, offset[0] + ctx.position());
      return std::vector<Array>{out, in[0]};
    };
  }
  const std::vector<Array> out = shard_map(rt, mesh, body, {P{"x"}}, {P{"x"}, P{"x"}}, {arange(8)});
  EXPECT_EQ(values(out[0]), (std::vector<int32_t>{100, 101, 102, 103}));
  EXPECT_EQ(values(out[1]), values(arange(8)));
}

TEST(ShardMapApi, BracedListsForSpecsAndInputs) {
  Runtime rt(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  const Array a = arange(4);
  const Array b = Array::full({3}, DType::kInt32, 7);
  // Swap the inputs: b is replicated (out_spec P{}), a gathered over x.
  const auto out = shard_map(
      rt, mesh,
      [](DeviceContext&, std::span<const Array> in) { return std::vector<Array>{in[1], in[0]}; },
      {P{"x"}, P{}}, {P{}, P{"x"}}, {a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(values(out[0]), (std::vector<int32_t>{7, 7, 7}));
  EXPECT_EQ(values(out[1]), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(ShardMapApi, BodyMayReturnOneArray) {
  Runtime rt(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  const auto out = shard_map(
      rt, mesh,
      [](DeviceContext& ctx, std::span<const Array>) {
        return Array::full({2}, DType::kInt32, ctx.position());
      },
      {}, {P{"x"}}, {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(values(out[0]), (std::vector<int32_t>{0, 0, 1, 1}));
}

TEST(ShardMapApi, OneInputOneOutputForm) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  const Array out = shard_map(
      rt, mesh, [](DeviceContext&, const Array& shard) { return shard; }, P{"x"}, P{"x"},
      arange(8));
  EXPECT_EQ(values(out), values(arange(8)));
}

TEST(ShardMapApi, PmapTakesABracedListAndASingleArrayBody) {
  Runtime rt(4);
  const auto out = pmap(
      rt, [](DeviceContext& ctx, std::span<const Array>) {
        return Array::full({}, DType::kInt32, 10 * ctx.position());
      },
      "i", {arange(4)});
  EXPECT_EQ(values(out[0]), (std::vector<int32_t>{0, 10, 20, 30}));
}

TEST(ShardMapApi, LaunchBodyInAVariable) {
  Runtime rt(3);
  std::vector<int> seen(3, -1);
  std::function<void(DeviceContext&)> body;
  {
    const int base = 5;
    body = [&seen, base](DeviceContext& ctx) { seen[ctx.position()] = base + ctx.device_id(); };
  }
  rt.launch(Mesh::make({{"x", 3}}), body);
  EXPECT_EQ(seen, (std::vector<int>{5, 6, 7}));
}

}  // namespace
}  // namespace meshsim::shard_map_api_test
