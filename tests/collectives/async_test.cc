// Async *_start / done: several handles pending at once on the same and on
// different groups, the device computing in between; every result equals the
// synchronous collective's (and a closed-form value).

#include "meshsim/collectives/async.h"

#include <gtest/gtest.h>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::async_test {
namespace {

TEST(AsyncTest, SeveralPendingHandlesGiveTheSynchronousResults) {
  Runtime rt(8);
  const Mesh mesh = Mesh::make({{"x", 4}, {"y", 2}});
  std::vector<std::vector<Array>> async_out(8), sync_out(8);
  const std::vector<std::pair<int, int>> ring = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  rt.launch(mesh, [&](DeviceContext& ctx) {
    const int p = ctx.position();
    const Array x = Array::full({4, 2}, DType::kInt32, p + 1);
    // Issue six, on two different groups, before finishing any.
    Pending sum_x = psum_start(ctx, x, "x");
    Pending gather_y = all_gather_start(ctx, x, "y");
    Pending scatter_x = psum_scatter_start(ctx, x, "x", {.tiled = true});
    Pending a2a_x = all_to_all_start(ctx, x, "x", 0, 0, {.tiled = true});
    Pending bcast_y = pbroadcast_start(ctx, x, "y", 1);
    Pending shift_x = ppermute_start(ctx, x, "x", ring);
    // The device computes in between.
    int64_t busy = 0;
    for (int i = 0; i < 1000; ++i) busy += i * p;
    EXPECT_EQ(busy, 499'500L * p);
    // Finish them in another order than they were started.
    async_out[p] = {shift_x.done(), bcast_y.done(), a2a_x.done(),
                    scatter_x.done(), gather_y.done(), sum_x.done()};
    sync_out[p] = {ppermute(ctx, x, "x", ring),
                   pbroadcast(ctx, x, "y", 1),
                   all_to_all(ctx, x, "x", 0, 0, {.tiled = true}),
                   psum_scatter(ctx, x, "x", {.tiled = true}),
                   all_gather(ctx, x, "y"),
                   psum(ctx, x, "x")};
  });
  for (int p = 0; p < 8; ++p) {
    for (size_t i = 0; i < sync_out[p].size(); ++i) {
      EXPECT_TRUE(array_equal(async_out[p][i], sync_out[p][i]))
          << "position " << p << " op " << i << ": "
          << first_difference(async_out[p][i], sync_out[p][i]);
    }
    // Closed forms: positions (x, y) hold p + 1 = 2x + y + 1.
    const int y = p % 2;
    const int sum_over_x = 4 * (y + 1) + 2 * (0 + 1 + 2 + 3);
    EXPECT_EQ(async_out[p][5].at<int32_t>({3, 1}), sum_over_x);
    EXPECT_EQ(async_out[p][1].at<int32_t>({0, 0}), (p - y) + 2);  // y index 1 of its pair
  }
}

// Every start takes its collective's algorithm choice; the record names it,
// and the result is the synchronous (direct) one.
TEST(AsyncTest, StartsRunTheAlgorithmTheyAreGiven) {
  Runtime rt(4);
  std::vector<std::vector<std::string>> ran(4);
  std::vector<std::vector<Array>> async_out(4), sync_out(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    const int p = ctx.position();
    const Array x = Array::full({4, 2}, DType::kInt32, p + 1);
    std::vector<Pending> pending;
    pending.push_back(psum_start(ctx, x, "x", {}, "ring"));
    pending.push_back(all_gather_start(ctx, x, "x", {.algorithm = "bruck"}));
    pending.push_back(psum_scatter_start(ctx, x, "x", {.tiled = true, .algorithm = "pairwise"}));
    pending.push_back(all_to_all_start(ctx, x, "x", 0, 0, {.tiled = true, .algorithm = "linear"}));
    pending.push_back(pbroadcast_start(ctx, x, "x", 2, "binomial_tree"));
    for (const CollectiveRecord& r : ctx.collective_records()) {
      ran[p].push_back(std::string(r.collective) + ":" + std::string(r.algorithm));
    }
    for (Pending& h : pending) async_out[p].push_back(h.done());
    sync_out[p] = {psum(ctx, x, "x"), all_gather(ctx, x, "x"),
                   psum_scatter(ctx, x, "x", {.tiled = true}),
                   all_to_all(ctx, x, "x", 0, 0, {.tiled = true}), pbroadcast(ctx, x, "x", 2)};
  });
  const std::vector<std::string> expected = {"psum:ring", "all_gather:bruck",
                                             "psum_scatter:pairwise", "all_to_all:linear",
                                             "pbroadcast:binomial_tree"};
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(ran[p], expected) << "position " << p;
    for (size_t i = 0; i < sync_out[p].size(); ++i) {
      EXPECT_TRUE(array_equal(async_out[p][i], sync_out[p][i]))
          << "position " << p << " op " << expected[i] << ": "
          << first_difference(async_out[p][i], sync_out[p][i]);
    }
  }
}

TEST(AsyncTest, DoneTwiceIsAnError) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [](DeviceContext& ctx) {
                           Pending h = psum_start(ctx, Array::zeros({1}, DType::kFloat32), "x");
                           EXPECT_FALSE(h.is_done());
                           h.done();
                           EXPECT_TRUE(h.is_done());
                           h.done();
                         }),
               RuntimeUsageError, "psum_done called twice");
}

// A handle moved from is done: its done() is the same error, not the
// moved-from result; the handle moved to gives the result.
TEST(AsyncTest, DoneOnAMovedFromHandleIsAnError) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [](DeviceContext& ctx) {
                           Pending h = psum_start(ctx, Array::full({2}, DType::kInt32, 3), "x");
                           Pending moved = std::move(h);
                           EXPECT_TRUE(h.is_done());  // NOLINT(bugprone-use-after-move)
                           EXPECT_FALSE(moved.is_done());
                           Pending assigned =
                               psum_start(ctx, Array::zeros({1}, DType::kInt32), "x");
                           assigned = std::move(moved);
                           EXPECT_EQ(assigned.done().span<int32_t>()[1], 6);
                           h.done();  // NOLINT(bugprone-use-after-move)
                         }),
               RuntimeUsageError, "psum_done called twice on the same handle (or on a handle "
                                  "moved from)");
}

}  // namespace
}  // namespace meshsim::async_test
