// After a collective returns, nothing the sender does through any handle or
// span it holds may change what a receiver got (issue 9 item 8). Each sender
// takes a mutable span first (legal: the span is valid while its Array is not
// copied), then hands x over, then writes through the old span. A result that
// shared the sender's storage would see the write.

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "meshsim/meshsim.h"

namespace meshsim::handover_test {
namespace {

using HandOver = std::function<Array(DeviceContext&, const Array&)>;

// Runs `op` on 4 devices (x=4); device p's x is [p, p]; afterwards every
// device overwrites its x through the span it took before. Returns the results.
std::vector<Array> run_then_scribble(const HandOver& op, int64_t elements = 2) {
  Runtime rt(4);
  std::vector<Array> results(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    Array x = Array::full({elements}, DType::kInt32, ctx.position());
    const std::span<int32_t> span = x.mutable_span<int32_t>();
    results[ctx.position()] = op(ctx, x);
    for (int32_t& v : span) v = -1;
  });
  return results;
}

Array filled(int32_t value, int64_t elements = 2) {
  return Array::full({elements}, DType::kInt32, value);
}

TEST(HandOverTest, PpermuteResultIsTheReceiversOwn) {
  // Small and large (past Meeting::kLeaderBytes): both schedules copy.
  for (const int64_t elements : {int64_t{2}, int64_t{1} << 16}) {
    const auto results = run_then_scribble(
        [](DeviceContext& ctx, const Array& x) {
          return ppermute(ctx, x, "x", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
        },
        elements);
    for (int p = 0; p < 4; ++p) {
      EXPECT_TRUE(array_equal(results[p], filled((p + 3) % 4, elements))) << p << " " << elements;
    }
  }
}

TEST(HandOverTest, PshuffleResultIsTheReceiversOwn) {
  const auto results = run_then_scribble(
      [](DeviceContext& ctx, const Array& x) { return pshuffle(ctx, x, "x", {1, 2, 3, 0}); });
  for (int p = 0; p < 4; ++p) EXPECT_TRUE(array_equal(results[p], filled((p + 1) % 4))) << p;
}

TEST(HandOverTest, PbroadcastResultIsEveryMembersOwn) {
  for (const int64_t elements : {int64_t{2}, int64_t{1} << 16}) {
    const auto results = run_then_scribble(
        [](DeviceContext& ctx, const Array& x) { return pbroadcast(ctx, x, "x", 2); }, elements);
    // The source's own result included.
    for (int p = 0; p < 4; ++p) {
      EXPECT_TRUE(array_equal(results[p], filled(2, elements))) << p << " " << elements;
    }
  }
}

TEST(HandOverTest, PsendMessageIsTheReceiversOwn) {
  // The sender scribbles after psend returns (before or after the precv,
  // either way): the receiver keeps the value at the time of the send.
  Runtime rt(2);
  Array received;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    if (ctx.position() == 0) {
      Array x = filled(7);
      const std::span<int32_t> span = x.mutable_span<int32_t>();
      psend(ctx, x, "x", {{0, 1}});
      for (int32_t& v : span) v = -1;
    } else {
      received = precv(ctx, Token{}, {2}, DType::kInt32, "x", {{0, 1}});
    }
  });
  EXPECT_TRUE(array_equal(received, filled(7))) << received;
}

}  // namespace
}  // namespace meshsim::handover_test
