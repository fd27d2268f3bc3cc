// A gathered dimension that overflows int64 is a CollectiveShapeError naming
// the shape, never a wrong shape or undefined behaviour (issue 9 item 6).
// Zero-size inputs make dims near 2^62 cheap: (0, 2^62) holds no element.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::result_shape_overflow_test {
namespace {

constexpr int64_t kBig = int64_t{1} << 62;

void on_x4(const std::function<void(DeviceContext&)>& body) {
  Runtime rt(4);
  rt.launch(Mesh::make({{"x", 4}}), body);
}

TEST(ResultShapeOverflowTest, TiledAllGather) {
  EXPECT_ERROR(on_x4([](DeviceContext& ctx) {
                 all_gather(ctx, Array::zeros({0, kBig}, DType::kFloat32), "x",
                            {.axis = 1, .tiled = true});
               }),
               CollectiveShapeError,
               "all_gather over 'x': the result for x of shape (0, 4611686018427387904) would "
               "have a dimension of 4611686018427387904 * 4, more than 2^63 - 1");
}

TEST(ResultShapeOverflowTest, TiledAllToAllConcatDimension) {
  EXPECT_ERROR(on_x4([](DeviceContext& ctx) {
                 all_to_all(ctx, Array::zeros({0, kBig}, DType::kFloat32), "x", 0, 1,
                            {.tiled = true});
               }),
               CollectiveShapeError,
               "all_to_all over 'x': the result for x of shape (0, 4611686018427387904) would "
               "have a dimension of 4611686018427387904 * 4");
}

// A dimension that fits (2^60 * 4 = 2^62) is still gathered.
TEST(ResultShapeOverflowTest, LargeButRepresentableDimsWork) {
  Runtime rt(4);
  std::vector<Array> out(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    out[ctx.position()] = all_gather(ctx, Array::zeros({0, kBig / 4}, DType::kFloat32), "x",
                                     {.axis = 1, .tiled = true});
  });
  for (const Array& a : out) EXPECT_EQ(a.shape(), (Shape{0, kBig}));
}

}  // namespace
}  // namespace meshsim::result_shape_overflow_test
