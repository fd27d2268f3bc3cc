// psend / precv: FIFO order over many messages (past the link capacity),
// ring exchanges against a reference over meshes, axes and dtypes, zeros for
// non-destinations, deadlock reports instead of hangs, shape / dtype / perm
// errors, and clean links after an aborted launch.

#include <gtest/gtest.h>

#include <stdexcept>

#include "meshsim/meshsim.h"
#include "meshsim/runtime/comm/internal/link.h"
#include "support/expect_error.h"
#include "support/param_names.h"

namespace meshsim::send_recv_test {
namespace {

using Pairs = std::vector<std::pair<int, int>>;

int32_t scalar_value(const Array& a) { return a.at<int32_t>({}); }

// 200 messages from axis index 0 to 1, 25 times the link capacity, so the
// sender keeps running ahead and waiting; they must arrive in order.
TEST(SendRecvTest, ManyMessagesArriveInOrder) {
  constexpr int kMessages = 200;
  Runtime rt(2);
  const Pairs perm = {{0, 1}};
  std::vector<int32_t> received;
  rt.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    Token token;
    for (int i = 0; i < kMessages; ++i) {
      if (ctx.axis_index("x") == 0) {
        token = psend(ctx, Array::scalar<int32_t>(i), "x", perm, token);
      } else {
        received.push_back(scalar_value(precv(ctx, token, {}, DType::kInt32, "x", perm)));
      }
    }
  });
  std::vector<int32_t> expected(kMessages);
  for (int i = 0; i < kMessages; ++i) expected[i] = i;
  EXPECT_EQ(received, expected);
}

// FIFO per (source, destination) pair, whatever perm each call names.
TEST(SendRecvTest, OnePairSharesItsLinkAcrossPerms) {
  Runtime rt(3);
  const Pairs one = {{0, 1}};
  const Pairs two = {{2, 0}, {0, 1}};
  std::vector<int32_t> received;
  rt.launch(Mesh::make({{"x", 3}}), [&](DeviceContext& ctx) {
    if (ctx.axis_index("x") == 0) {
      psend(ctx, Array::scalar<int32_t>(1), "x", one);
      psend(ctx, Array::scalar<int32_t>(2), "x", two);
    } else if (ctx.axis_index("x") == 1) {
      received.push_back(scalar_value(precv(ctx, {}, {}, DType::kInt32, "x", two)));
      received.push_back(scalar_value(precv(ctx, {}, {}, DType::kInt32, "x", one)));
    }
  });
  EXPECT_EQ(received, (std::vector<int32_t>{1, 2}));
}

// perm [(0, 2)] over 3 devices: index 2 receives index 0's value; index 1
// sends nothing and, like index 0, receives zeros of the requested shape.
TEST(SendRecvTest, NonDestinationsReceiveZeros) {
  Runtime rt(3);
  const Pairs perm = {{0, 2}};
  const Array out = shard_map(
      rt, Mesh::make({{"x", 3}}),
      [&](DeviceContext& ctx, const Array& x) {
        const Token token = psend(ctx, x, "x", perm);
        return precv(ctx, token, {2}, DType::kInt32, "x", perm);
      },
      P{"x"}, P{"x"}, Array::from_values<int32_t>({6}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>({6}, {0, 0, 0, 0, 1, 2}))) << out;
}

// Perm indices in [-n, n) as ppermute (issue 9 item 16), and braced lists of
// pairs passed straight to psend / precv (item 18): (-1, 0) on 3 devices is
// (2, 0).
TEST(SendRecvTest, NegativeIndicesAndBracedPerms) {
  Runtime rt(3);
  const Array out = shard_map(
      rt, Mesh::make({{"x", 3}}),
      [&](DeviceContext& ctx, const Array& x) {
        const Token token = psend(ctx, x, "x", {{-1, 0}});
        return precv(ctx, token, {2}, DType::kInt32, "x", {{2, -3}});
      },
      P{"x"}, P{"x"}, Array::from_values<int32_t>({6}, {1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(array_equal(out, Array::from_values<int32_t>({6}, {5, 6, 0, 0, 0, 0}))) << out;
}

struct Case {
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
};

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, DType>>& info) {
  const auto& [c, dtype] = info.param;
  std::string name = testing_names::mesh_axes_name(c.mesh, c.axes);
  return name + "_" + std::string(dtype_name(dtype));
}

class RingExchangeTest : public ::testing::TestWithParam<std::tuple<Case, DType>> {};

// Every member sends to the next axis index and receives from the previous
// one, kRounds times: it ends with the input of the member kRounds before it.
TEST_P(RingExchangeTest, MatchesReference) {
  constexpr int kRounds = 5;
  const auto& [c, dtype] = GetParam();
  const Mesh mesh = Mesh::make(c.mesh);
  const int devices = mesh.size();
  const DeviceGroups groups = device_groups(mesh.abstract_mesh(), c.axes);
  const int n = static_cast<int>(groups.members[0].size());
  Pairs ring;
  for (int i = 0; i < n; ++i) ring.emplace_back(i, (i + 1) % n);
  std::vector<Array> inputs;
  for (int p = 0; p < devices; ++p) {
    inputs.push_back(Array::from_values<double>({2}, {10.0 * p + 1, 10.0 * p + 2}).astype(dtype));
  }
  std::vector<Array> outputs(devices);
  Runtime rt(devices);
  rt.launch(mesh, [&, &c = c, dtype = dtype](DeviceContext& ctx) {
    Array x = inputs[ctx.position()];
    for (int round = 0; round < kRounds; ++round) {
      const Token token = psend(ctx, x, c.axes, ring);
      x = precv(ctx, token, {2}, dtype, c.axes, ring);
    }
    outputs[ctx.position()] = x;
  });
  for (int p = 0; p < devices; ++p) {
    const int from = ((groups.rank_of[p] - kRounds) % n + n) % n;
    const Array& expected = inputs[groups.members[groups.group_of[p]][from]];
    ASSERT_TRUE(array_equal(outputs[p], expected))
        << "position " << p << ": " << first_difference(outputs[p], expected);
  }
}

const Case kCases[] = {
    {{{"x", 1}}, {"x"}},
    {{{"x", 2}}, {"x"}},
    {{{"x", 16}}, {"x"}},
    {{{"x", 4}, {"y", 4}}, {"y"}},
    {{{"x", 4}, {"y", 4}}, {"x", "y"}},
    {{{"x", 4}, {"y", 4}}, {"y", "x"}},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"c", "a"}},
    {{{"a", 2}, {"b", 3}, {"c", 2}}, {"a", "b", "c"}},
};

INSTANTIATE_TEST_SUITE_P(SendRecv, RingExchangeTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(DType::kFloat32, DType::kInt8,
                                                              DType::kBFloat16, DType::kBool)),
                         case_name);

TEST(SendRecvTest, PrecvWithoutPsendIsADeadlock) {
  Runtime rt(2);
  const Pairs perm = {{0, 1}};
  EXPECT_ERROR(
      rt.launch(Mesh::make({{"x", 2}}),
                [&](DeviceContext& ctx) { precv(ctx, {}, {1}, DType::kFloat32, "x", perm); }),
      DeadlockError, "device 1: waiting in precv on axes 'x'");
}

// A sender more than a link.s capacity ahead of a receiver that never
// comes waits for good: a deadlock, not a hang.
TEST(SendRecvTest, PsendIntoAFullLinkIsADeadlock) {
  Runtime rt(2);
  const Pairs perm = {{1, 0}};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           for (uint32_t i = 0; i <= Link::kSlots; ++i) {
                             psend(ctx, Array::zeros({1}, DType::kFloat32), "x", perm);
                           }
                         }),
               DeadlockError, "device 1: waiting in psend on axes 'x'");
}

TEST(SendRecvTest, ReceivingAnotherShapeIsAShapeError) {
  Runtime rt(2);
  const Pairs perm = {{0, 1}};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           psend(ctx, Array::zeros({2}, DType::kFloat32), "x", perm);
                           precv(ctx, {}, {3}, DType::kFloat32, "x", perm);
                         }),
               ShapeError,
               "device 1: precv over 'x' on axis index 1 expected float32(3) but axis index 0 "
               "(device 0) sent float32(2)");
}

// A negative dim in the shape expected is an error naming precv on every
// device, also where nothing is sent (there, the zeros it would return).
TEST(SendRecvTest, ANegativeExpectedDimNamesPrecv) {
  Runtime rt(2);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           precv(ctx, {}, {-2}, DType::kFloat32, "x", Pairs{{0, 1}});
                         }),
               ShapeError, "precv over 'x': negative dim in shape (-2)");
}

TEST(SendRecvTest, ReceivingAnotherDtypeIsADTypeError) {
  Runtime rt(2);
  const Pairs perm = {{0, 1}};
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 2}}),
                         [&](DeviceContext& ctx) {
                           psend(ctx, Array::zeros({2}, DType::kInt32), "x", perm);
                           precv(ctx, {}, {2}, DType::kFloat32, "x", perm);
                         }),
               DTypeError,
               "device 1: precv over 'x' on axis index 1 expected float32(2) but axis index 0 "
               "(device 0) sent int32(2)");
}

TEST(SendRecvTest, BadPermsAreInvalidPermutations) {
  Runtime rt(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  const Pairs same_source = {{0, 1}, {0, 0}};
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           psend(ctx, Array::zeros({1}, DType::kFloat32), "x", same_source);
                         }),
               InvalidPermutationError,
               "psend over 'x': pairs (0, 1) and (0, 0) of perm have the same source 0");
  const Pairs out_of_range = {{0, 2}};
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           precv(ctx, {}, {1}, DType::kFloat32, "x", out_of_range);
                         }),
               InvalidPermutationError,
               "precv over 'x': pair (0, 2) of perm is out of range [-2, 2) for axis size 2");
}

// A launch that fails with messages still on a link must not leak them
// into the next launch on the same mesh.
TEST(SendRecvTest, AnAbortedLaunchEmptiesTheLinks) {
  Runtime rt(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  const Pairs perm = {{0, 1}};
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           for (int32_t i = 0; i < 3; ++i) {
                             if (ctx.position() == 0) {
                               psend(ctx, Array::scalar<int32_t>(i), "x", perm);
                             } else {
                               precv(ctx, {}, {}, DType::kInt32, "x", perm);
                               throw std::runtime_error("device 1 gives up");
                             }
                           }
                         }),
               DeviceError, "device 1 gives up");
  int32_t received = -1;
  rt.launch(mesh, [&](DeviceContext& ctx) {
    if (ctx.position() == 0) {
      psend(ctx, Array::scalar<int32_t>(42), "x", perm);
    } else {
      received = scalar_value(precv(ctx, {}, {}, DType::kInt32, "x", perm));
    }
  });
  EXPECT_EQ(received, 42);
}

}  // namespace
}  // namespace meshsim::send_recv_test

namespace meshsim::send_recv_test {
namespace {

// psend without a matching precv is a program error: the launch that leaves
// messages behind fails naming them, and none leaks into the next launch.
TEST(SendRecvTest, UnreceivedMessagesFailTheLaunchAndAreDropped) {
  Runtime rt(3);
  const Mesh mesh = Mesh::make({{"x", 3}});
  const std::vector<std::pair<int, int>> perm = {{0, 2}};
  EXPECT_ERROR(rt.launch(mesh,
                         [&](DeviceContext& ctx) {
                           if (ctx.position() == 0) {
                             psend(ctx, Array::scalar<int32_t>(1), "x", perm);
                             psend(ctx, Array::scalar<int32_t>(2), "x", perm);
                           } else if (ctx.position() == 2) {
                             precv(ctx, {}, {}, DType::kInt32, "x", perm);
                           }
                         }),
               UnreceivedMessageError, "1 from device 0 to device 2");
  int32_t received = -1;
  rt.launch(mesh, [&](DeviceContext& ctx) {
    if (ctx.position() == 0) {
      psend(ctx, Array::scalar<int32_t>(42), "x", perm);
    } else if (ctx.position() == 2) {
      received = precv(ctx, {}, {}, DType::kInt32, "x", perm).at<int32_t>({});
    }
  });
  EXPECT_EQ(received, 42);
}

}  // namespace
}  // namespace meshsim::send_recv_test
