// Virtual time (runtime/time/virtual_time.h) on real programs: the algorithms'
// closed-form costs on a congestion-unaware fully connected network (every
// pair one hop: alpha = latency, beta = 1 / bandwidth), direct collectives
// priced as the transfers they stand for, compute, overlap of a start with
// compute, determinism across execution modes, and the errors. Latency and
// bandwidth are powers of two and sizes divide evenly, so every expected time
// is exact in binary floating point.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "meshsim/collectives/all_gather.h"
#include "meshsim/collectives/all_to_all.h"
#include "meshsim/collectives/psum_scatter.h"
#include "meshsim/collectives/async.h"
#include "meshsim/collectives/barrier.h"
#include "meshsim/collectives/pbroadcast.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/collectives/reductions.h"
#include "meshsim/collectives/send_recv.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/time/callback_model.h"
#include "meshsim/runtime/time/congestion_unaware_model.h"
#include "support/expect_error.h"
#include "support/fully_connected_time.h"

namespace meshsim::virtual_time_test {
namespace {

using fully_connected_time::fully_connected;
using fully_connected_time::kAlpha;
using fully_connected_time::kBandwidth;
using fully_connected_time::kBeta;

// Runs `body` on a one-axis mesh of p devices with virtual time on and
// returns each device's final clock.
std::vector<double> run_timed(int p, const std::function<void(DeviceContext&)>& body,
                              std::shared_ptr<const VirtualTime> time = nullptr,
                              ExecutionMode mode = ExecutionMode::kThreads) {
  Runtime runtime(p, RuntimeOptions{.execution = mode});
  LaunchRecord record;
  runtime.launch(Mesh::make({{"x", p}}), body,
                 {.time = time ? time : fully_connected(p), .record = &record});
  EXPECT_EQ(record.end_times.size(), static_cast<size_t>(p));
  return record.end_times;
}

void expect_all(const std::vector<double>& times, double expected, const std::string& what) {
  for (size_t d = 0; d < times.size(); ++d) {
    EXPECT_DOUBLE_EQ(times[d], expected) << what << ", device " << d;
  }
}

class ClosedForm : public ::testing::TestWithParam<int> {};

TEST_P(ClosedForm, AllReduceAlgorithms) {
  const int p = GetParam();
  const int lg = static_cast<int>(std::log2(p));
  for (int64_t count : {int64_t{16}, int64_t{256} * p}) {
    const double n = 4.0 * static_cast<double>(count);  // float32 bytes
    const auto run = [&](const char* algorithm) {
      return run_timed(p, [&](DeviceContext& ctx) {
        const Array y = psum(ctx, Array::full({count}, DType::kFloat32, 1), "x", {}, algorithm);
        ASSERT_EQ(y.at<float>({0}), static_cast<float>(p));
      });
    };
    const std::string size = " for " + std::to_string(p) + " devices, " + std::to_string(n) + " B";
    expect_all(run("ring"), 2 * (p - 1) * (kAlpha + n / p * kBeta), "ring" + size);
    expect_all(run("recursive_doubling"), lg * (kAlpha + n * kBeta), "recursive doubling" + size);
    expect_all(run("rabenseifner"), 2 * lg * kAlpha + 2.0 * (p - 1) / p * n * kBeta,
               "rabenseifner" + size);
    expect_all(run("direct"), kAlpha + n * kBeta, "direct" + size);
  }
}

TEST_P(ClosedForm, RingAllGatherAndBinomialBroadcast) {
  const int p = GetParam();
  const int lg = static_cast<int>(std::log2(p));
  const int64_t shard = 64;  // float32 elements per member
  const double n = 4.0 * shard * p;  // the gathered bytes
  expect_all(run_timed(p,
                       [&](DeviceContext& ctx) {
                         all_gather(ctx, Array::full({shard}, DType::kFloat32, 1), "x",
                                    {.tiled = true, .algorithm = "ring"});
                       }),
             (p - 1) * (kAlpha + n / p * kBeta), "ring all_gather");
  // A member finishes when its copy arrives: the root at once, the last
  // leaf after lg p hops, each alpha + m beta.
  const double m = 4.0 * 512;
  const auto times = run_timed(p, [&](DeviceContext& ctx) {
    pbroadcast(ctx, Array::full({512}, DType::kFloat32, 1), "x", 0, "binomial_tree");
  });
  EXPECT_EQ(times[0], 0.0);
  EXPECT_DOUBLE_EQ(*std::max_element(times.begin(), times.end()), lg * (kAlpha + m * kBeta));
  for (double t : times) {
    const double hops = t / (kAlpha + m * kBeta);
    EXPECT_DOUBLE_EQ(hops, std::round(hops)) << "a member's time is a whole number of hops";
  }
}

INSTANTIATE_TEST_SUITE_P(VirtualTime, ClosedForm, ::testing::Values(2, 4, 8, 16));

TEST(VirtualTime, DirectCollectivesWaitOnlyForTheDataTheyReceive) {
  // ppermute 0 -> 1 -> 2 -> 3 (no wrap): device 0 receives nothing and keeps
  // its clock; device k starts at k seconds and receives from k - 1.
  const double n = 4.0 * 256;
  const auto times = run_timed(4, [&](DeviceContext& ctx) {
    ctx.advance(ctx.position());
    ppermute(ctx, Array::full({256}, DType::kFloat32, 1), "x", {{0, 1}, {1, 2}, {2, 3}});
  });
  EXPECT_DOUBLE_EQ(times[0], 0.0);
  for (int k = 1; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(times[k], std::max<double>(k, (k - 1) + kAlpha + n * kBeta)) << k;
  }
  // A barrier: each member waits for the others' zero-byte messages, so the
  // latest member goes on at once and the others one latency after it.
  const auto barrier_times = run_timed(4, [&](DeviceContext& ctx) {
    ctx.advance(ctx.position() == 2 ? 3.0 : 1.0);
    barrier(ctx, "x");
  });
  EXPECT_EQ(barrier_times, (std::vector<double>{3.0 + kAlpha, 3.0 + kAlpha, 3.0, 3.0 + kAlpha}));
}

TEST(VirtualTime, PsendPrecvPriceTheMessage) {
  const auto times = run_timed(2, [&](DeviceContext& ctx) {
    if (ctx.position() == 0) {
      ctx.advance(2.0);
      psend(ctx, Array::full({128}, DType::kFloat32, 1), "x", {{0, 1}});
    } else {
      precv(ctx, {}, {128}, DType::kFloat32, "x", {{0, 1}});
    }
  });
  EXPECT_DOUBLE_EQ(times[0], 2.0);
  EXPECT_DOUBLE_EQ(times[1], 2.0 + kAlpha + 512 * kBeta);
}

TEST(VirtualTime, StartOverlapsComputeUntilDone) {
  // The transfer takes alpha + 1 KiB * beta = 1.25 s.
  const double transfer = kAlpha + 1024 * kBeta;
  for (double compute : {0.5, 3.0}) {
    const auto times = run_timed(2, [&](DeviceContext& ctx) {
      Pending h = ppermute_start(ctx, Array::full({256}, DType::kFloat32, 1), "x", {{0, 1}, {1, 0}});
      EXPECT_DOUBLE_EQ(ctx.now(), 0.0);  // the start leaves the clock where it was
      ctx.advance(compute);
      h.done();
    });
    expect_all(times, std::max(compute, transfer), "ppermute_start + compute " +
                                                      std::to_string(compute) + " s + done");
  }
}

TEST(VirtualTime, ComputeOnTheRoofline) {
  const DeviceSpec spec{.peak_flops = 1 << 20, .memory_bandwidth = 1 << 10};
  const auto times = run_timed(
      2,
      [&](DeviceContext& ctx) {
        ctx.compute(1 << 21, 1 << 10);  // compute bound: 2 s
        ctx.compute(1 << 10, 1 << 12);  // memory bound: 4 s
      },
      fully_connected(2, false, spec));
  expect_all(times, 6.0, "roofline");
}

TEST(VirtualTime, IsTheSameOnEveryRunAndInBothExecutionModes) {
  // Devices do different amounts of compute between collectives of several
  // algorithms, so the clocks depend on who waits for whom.
  const auto program = [](DeviceContext& ctx) {
    Array x = Array::full({1000}, DType::kFloat32, 1);
    for (int step = 0; step < 5; ++step) {
      ctx.advance(0.001 * ((ctx.position() * 7 + step * 3) % 5));
      x = psum(ctx, x, "x", {}, step % 2 ? "ring" : "direct");
      x = all_gather(ctx, Array::full({100}, DType::kFloat32, 1), "x", {.tiled = true});
      x = Array::full({1000}, DType::kFloat32, 1);
    }
  };
  const auto first = run_timed(8, program);
  EXPECT_GT(first[0], 0.0);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(run_timed(8, program), first);
  EXPECT_EQ(run_timed(8, program, nullptr, ExecutionMode::kFibers), first);
}

TEST(VirtualTime, OffMeansZeroClocksAndNoRecord) {
  Runtime runtime(2);
  LaunchRecord record;
  record.end_times = {1.0};
  runtime.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    ctx.advance(5.0);  // a no-op without virtual time
    ctx.compute(1e9, 1e9);
    psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
    EXPECT_EQ(ctx.now(), 0.0);
  }, {.record = &record});
  EXPECT_TRUE(record.end_times.empty());
  EXPECT_EQ(record.makespan(), 0.0);
}

// A failed launch reports no end times: each device's clock stopped where
// it was cancelled, which varies from run to run (device 2 may throw while
// the others still price the first psum, or once they wait in the second).
TEST(VirtualTime, AFailedLaunchHasNoEndTimes) {
  Runtime runtime(4);
  for (int run = 0; run < 20; ++run) {
    LaunchRecord record;
    record.end_times = {1.0};
    EXPECT_THROW(runtime.launch(
                     Mesh::make({{"x", 4}}),
                     [](DeviceContext& ctx) {
                       psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
                       if (ctx.position() == 2) throw std::runtime_error("boom");
                       psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
                     },
                     {.time = fully_connected(4), .record = &record}),
                 DeviceError);
    EXPECT_TRUE(record.end_times.empty()) << "run " << run;
    EXPECT_EQ(record.makespan(), 0.0);
  }
}

TEST(VirtualTime, RuntimeDefaultAppliesToEveryLaunch) {
  Runtime runtime(2, RuntimeOptions{.virtual_time = fully_connected(2)});
  LaunchRecord record;
  runtime.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) {
    ctx.advance(1.0);
    barrier(ctx, "x");
  }, {.record = &record});
  EXPECT_EQ(record.makespan(), 1.0 + kAlpha);
}

TEST(VirtualTime, BadConfigurationsAreErrorsBeforeAnyDeviceRuns) {
  Runtime runtime(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  bool ran = false;
  const auto body = [&](DeviceContext&) { ran = true; };
  auto no_model = std::make_shared<VirtualTime>();
  EXPECT_ERROR(runtime.launch(mesh, body, {.time = no_model}), InvalidArgumentError,
               "no network model and no external clock");
  auto too_small = std::make_shared<VirtualTime>(*fully_connected(2));
  EXPECT_ERROR(runtime.launch(mesh, body, {.time = too_small}), InvalidArgumentError,
               "mesh position 2 is placed on node 2");
  auto wrong_count = std::make_shared<VirtualTime>(*fully_connected(4));
  wrong_count->nodes = {0, 1};
  EXPECT_ERROR(runtime.launch(mesh, body, {.time = wrong_count}), InvalidArgumentError,
               "2 topology nodes for 4 mesh positions");
  EXPECT_FALSE(ran);
}

TEST(VirtualTime, BadAnnotationsNameTheDevice) {
  Runtime runtime(2);
  const Mesh mesh = Mesh::make({{"x", 2}});
  EXPECT_ERROR(runtime.launch(mesh,
                              [](DeviceContext& ctx) {
                                if (ctx.position() == 1) ctx.advance(-1.0);
                              },
                              {.time = fully_connected(2)}),
               InvalidArgumentError, "device 1: advance of -1");
  std::string what;  // the device named once, where it was raised, not again by the launch
  try {
    runtime.launch(mesh, [](DeviceContext& ctx) {
      if (ctx.position() == 0) ctx.advance(-1.0);
    });
  } catch (const InvalidArgumentError& e) {
    what = e.what();
  }
  EXPECT_TRUE(what.starts_with("device 0: advance of -1")) << what;
  EXPECT_ERROR(runtime.launch(mesh,
                              [](DeviceContext& ctx) {
                                if (ctx.position() == 0) {
                                  ctx.advance(1e308);
                                  ctx.advance(1e308);
                                }
                              },
                              {.time = fully_connected(2)}),
               InvalidArgumentError, "device 0: its virtual clock");
  EXPECT_ERROR(runtime.launch(mesh, [](DeviceContext& ctx) { ctx.advance(std::nan("")); }),
               InvalidArgumentError, "must be finite");
  EXPECT_ERROR(runtime.launch(mesh, [](DeviceContext& ctx) { ctx.compute(1.0, 0.0); },
                              {.time = fully_connected(2)}),
               InvalidArgumentError,
               "compute() needs the launch's DeviceSpec::peak_flops to be a finite number > 0 "
               "(it is 0.000000)");
  // Not "> 0" for an infinite one, which is > 0 but makes compute free.
  auto infinite = std::make_shared<VirtualTime>(*fully_connected(2));
  infinite->device.peak_flops = std::numeric_limits<double>::infinity();
  EXPECT_ERROR(runtime.launch(mesh, [](DeviceContext& ctx) { ctx.compute(1.0, 0.0); },
                              {.time = infinite}),
               InvalidArgumentError, "to be a finite number > 0 (it is inf)");
}

TEST(VirtualTime, AModelThatFailsFailsTheLaunchCleanly) {
  // The model returns a time before the departure for messages into device 1;
  // CallbackModel rejects that. Members may be reading each other's buffers
  // in place when it happens (large direct psum on 16, ring transfers).
  auto time = std::make_shared<VirtualTime>();
  time->network = std::make_shared<CallbackModel>([](const Transfer& t) {
    return t.destination == 1 ? t.departure - 1 : t.departure + 1;
  });
  for (const char* algorithm : {"direct", "ring"}) {
    for (int p : {4, 16}) {
      Runtime runtime(p);
      EXPECT_ERROR(runtime.launch(Mesh::make({{"x", p}}),
                                  [&](DeviceContext& ctx) {
                                    psum(ctx, Array::full({1 << 16}, DType::kFloat32, 1), "x", {},
                                         algorithm);
                                  },
                                  {.time = time}),
                   InvalidArgumentError, "expected a finite time >= the departure");
    }
  }
}

// A NetworkModel of the user's own, not a CallbackModel: the launch checks
// what it prices, so a NaN, an infinity or a time before the departure
// fails the launch naming the transfer instead of becoming a clock (the
// makespan read 0 for a NaN and inf for an infinity).
class FixedArrivalModel final : public NetworkModel {
 public:
  explicit FixedArrivalModel(double offset) : offset_(offset) {}
  double arrival(const Transfer& transfer) override { return transfer.departure + offset_; }
  void reset() override {}

 private:
  double offset_;
};

TEST(VirtualTime, AUserModelsNonFiniteOrEarlyArrivalFailsTheLaunch) {
  // The first transfers depart at 0, so they arrive at the offset.
  const std::pair<double, std::string> cases[] = {
      {std::nan(""), "nan"}, {std::numeric_limits<double>::infinity(), "inf"}, {-1.0, "-1"}};
  for (const auto& [offset, shown] : cases) {
    auto time = std::make_shared<VirtualTime>();
    time->network = std::make_shared<FixedArrivalModel>(offset);
    Runtime runtime(2);
    LaunchRecord record;
    EXPECT_ERROR(runtime.launch(Mesh::make({{"x", 2}}),
                                [&](DeviceContext& ctx) {
                                  psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
                                },
                                {.time = time, .record = &record}),
                 InvalidArgumentError,
                 "the network model returned " + shown + " for transfer ");
  }
  // A sound one on the same path prices the psum: 2 transfers of 16 bytes.
  auto time = std::make_shared<VirtualTime>();
  time->network = std::make_shared<FixedArrivalModel>(0.5);
  Runtime runtime(2);
  LaunchRecord record;
  runtime.launch(Mesh::make({{"x", 2}}),
                 [&](DeviceContext& ctx) { psum(ctx, Array::full({4}, DType::kFloat32, 1), "x"); },
                 {.time = time, .record = &record});
  EXPECT_DOUBLE_EQ(record.makespan(), 0.5);
}

TEST(VirtualTime, AHandleKeptPastItsLaunchIsAnError) {
  Runtime runtime(2);
  std::vector<Pending> kept;
  std::mutex mu;
  runtime.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    Pending h = psum_start(ctx, Array::full({4}, DType::kFloat32, 1), "x");
    std::lock_guard lock(mu);
    kept.push_back(std::move(h));
  }, {.time = fully_connected(2)});
  EXPECT_ERROR(kept[0].done(), RuntimeUsageError, "after the launch of its psum_start ended");
  // Without virtual time a handle is plain data, as in JAX.
  Runtime untimed(2);
  std::vector<Pending> plain;
  untimed.launch(Mesh::make({{"x", 2}}), [&](DeviceContext& ctx) {
    Pending h = psum_start(ctx, Array::full({4}, DType::kFloat32, 1), "x");
    std::lock_guard lock(mu);
    plain.push_back(std::move(h));
  });
  EXPECT_EQ(plain[0].done().at<float>({0}), 2.0f);
}

TEST(VirtualTime, ScatterAllToAllAndRaggedPriceTheirBlocks) {
  // 4 members, 1 KiB of float32 each: psum_scatter and all_to_all move one
  // 256 B block to each peer.
  const double block = kAlpha + 256 * kBeta;
  expect_all(run_timed(4,
                       [](DeviceContext& ctx) {
                         psum_scatter(ctx, Array::full({256}, DType::kFloat32, 1), "x",
                                      {.scatter_dimension = 0, .tiled = true});
                       }),
             block, "psum_scatter");
  expect_all(run_timed(4,
                       [](DeviceContext& ctx) {
                         all_to_all(ctx, Array::full({256}, DType::kFloat32, 1), "x", 0, 0,
                                    {.tiled = true});
                       }),
             block, "all_to_all");
}

TEST(VirtualTime, ClocksStartAtZeroInEveryLaunch) {
  // Time on, off, on again over one mesh: the clock posts of the rendezvous
  // carry over between launches, the clocks do not.
  Runtime runtime(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  const auto body = [](DeviceContext& ctx) {
    ctx.advance(ctx.position());
    psum(ctx, Array::full({256}, DType::kFloat32, 1), "x");
    psum(ctx, Array::full({256}, DType::kFloat32, 1), "x", {}, "ring");
  };
  LaunchRecord first, off, second;
  runtime.launch(mesh, body, {.time = fully_connected(4), .record = &first});
  runtime.launch(mesh, body, {.record = &off});
  runtime.launch(mesh, body, {.time = fully_connected(4), .record = &second});
  EXPECT_TRUE(off.end_times.empty());
  EXPECT_EQ(first.end_times, second.end_times);
  EXPECT_EQ(first.end_times, run_timed(4, body));  // as on a fresh runtime
  // After the direct psum devices 0-2 wait for device 3 (3 s + alpha + 1 KiB
  // beta = 4.25 s) and device 3 for device 2 (3.25 s); the ring adds at least
  // its 2 (p - 1) (alpha + 256 B beta) = 3 s.
  for (double t : first.end_times) EXPECT_GE(t, 3.25 + 3.0);
}

TEST(VirtualTime, PlacementFromATopologyMapping) {
  // A (x=2, y=2) mesh on two 2-node rings: dimension 0 fast (alpha),
  // dimension 1 slow (4 alpha). The default mapping puts the last axis, y, on
  // dimension 0; an explicit one puts x there, so a y-neighbour is 4 alpha away.
  const AbstractMesh grid({{"x", 2}, {"y", 2}});
  const Topology two_rings({{DimensionKind::ring, 2, kBandwidth, kAlpha},
                            {DimensionKind::ring, 2, kBandwidth, 4 * kAlpha}});
  const auto model = std::make_shared<CongestionUnawareModel>(two_rings);
  const auto along_y = [](DeviceContext& ctx) {
    ppermute(ctx, Array::full({0}, DType::kFloat32, 0), "y", {{0, 1}});
  };
  Runtime grid_runtime(4);
  LaunchRecord by_default, by_x;
  grid_runtime.launch(Mesh(grid), along_y,
                      {.time = std::make_shared<VirtualTime>(virtual_time_on(
                           model, grid, TopologyMapping(grid, two_rings))),
                       .record = &by_default});
  grid_runtime.launch(Mesh(grid), along_y,
                      {.time = std::make_shared<VirtualTime>(virtual_time_on(
                           model, grid, TopologyMapping(grid, two_rings, {{"x", {0}}, {"y", {1}}}))),
                       .record = &by_x});
  EXPECT_EQ(by_default.end_times, (std::vector<double>{0, kAlpha, 0, kAlpha}));
  EXPECT_EQ(by_x.end_times, (std::vector<double>{0, 4 * kAlpha, 0, 4 * kAlpha}));
}

TEST(VirtualTime, PlacementFromANodeList) {
  // Four devices on a 4-node unidirectional ring placed in reverse: the
  // ppermute 0 -> 1 travels from node 3 to node 2, three hops forward.
  const AbstractMesh shape({{"x", 4}});
  const Topology ring({{DimensionKind::ring, 4, kBandwidth, kAlpha}});
  auto time = std::make_shared<VirtualTime>(virtual_time_on(
      std::make_shared<CongestionUnawareModel>(ring), shape, TopologyMapping(shape, ring)));
  time->nodes = {3, 2, 1, 0};
  Runtime runtime(4);
  LaunchRecord record;
  runtime.launch(Mesh(shape), [](DeviceContext& ctx) {
    ppermute(ctx, Array::full({0}, DType::kFloat32, 0), "x", {{0, 1}});
  }, {.time = time, .record = &record});
  EXPECT_DOUBLE_EQ(record.end_times[1], 3 * kAlpha);
  EXPECT_DOUBLE_EQ(record.end_times[0], 0.0);
}

}  // namespace
}  // namespace meshsim::virtual_time_test
