// Launches priced after they end (virtual_time.h): a congestion-aware network
// and an external simulator (external_clock.h). Closed forms where the
// network is not shared, the ring-step script (support/ring_step_schedule.h)
// as the independent reference where it is, and every misuse. alpha = 2^-10
// s, beta = 2^-20 s/byte and sizes in KiB: every expected time is exact.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "meshsim/collectives/async.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/collectives/reductions.h"
#include "meshsim/collectives/send_recv.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/time/congestion_aware_model.h"
#include "meshsim/runtime/time/congestion_unaware_model.h"
#include "meshsim/runtime/time/external_clock.h"
#include "support/expect_error.h"
#include "support/ring_step_schedule.h"

namespace meshsim::deferred_time_test {
namespace {

constexpr double kAlpha = 1.0 / 1024;
constexpr double kBandwidth = 1 << 20;
constexpr double kBeta = 1 / kBandwidth;

std::shared_ptr<VirtualTime> aware_on(DimensionKind kind, int p) {
  auto time = std::make_shared<VirtualTime>();
  time->network =
      std::make_shared<CongestionAwareModel>(Topology({{kind, p, kBandwidth, kAlpha}}));
  return time;
}

// Runs `body` on a one-axis mesh of p devices and returns the record.
LaunchRecord run_priced(int p, const std::function<void(DeviceContext&)>& body,
                        std::shared_ptr<const VirtualTime> time, bool trace = false,
                        ExecutionMode mode = ExecutionMode::kThreads) {
  Runtime runtime(p, RuntimeOptions{.execution = mode});
  LaunchRecord record;
  runtime.launch(Mesh::make({{"x", p}}), body,
                 {.time = std::move(time), .record = &record, .trace = trace});
  EXPECT_EQ(record.end_times.size(), static_cast<size_t>(p));
  return record;
}

std::function<void(DeviceContext&)> all_reduce(int64_t floats, const char* algorithm) {
  return [=](DeviceContext& ctx) {
    const Array out = psum(ctx, Array::full({floats}, DType::kFloat32, 1), "x", {}, algorithm);
    ASSERT_EQ(out.at<float>({0}), static_cast<float>(ctx.mesh().size()));
  };
}

void expect_all(const std::vector<double>& times, double expected) {
  for (size_t d = 0; d < times.size(); ++d) EXPECT_EQ(times[d], expected) << "device " << d;
}

class CongestionAwareLaunch : public ::testing::TestWithParam<int> {};

TEST_P(CongestionAwareLaunch, RingAllReduceOnEitherRingIsTheClosedForm) {
  // Every message goes one hop forward on its own link: no congestion.
  const int p = GetParam();
  const int64_t chunk = 1024;  // bytes per step
  const double expected = 2 * (p - 1) * (kAlpha + chunk * kBeta);
  for (DimensionKind kind : {DimensionKind::ring, DimensionKind::bidirectional_ring}) {
    expect_all(run_priced(p, all_reduce(p * chunk / 4, "ring"), aware_on(kind, p)).end_times,
               expected);
  }
}

TEST_P(CongestionAwareLaunch, BidirectionalRingAllReduceNeedsABidirectionalRing) {
  // Half of each chunk goes each way. On a bidirectional ring the two halves
  // of a step travel at once on opposite links; on a unidirectional one the
  // backward half goes p-1 hops forward, sharing links with everything.
  const int p = GetParam();
  const int64_t half_chunk = 1024;
  const int64_t floats = 2 * p * half_chunk / 4;
  const auto on_bi = run_priced(p, all_reduce(floats, "bidirectional_ring"),
                                aware_on(DimensionKind::bidirectional_ring, p));
  expect_all(on_bi.end_times, 2 * (p - 1) * (kAlpha + half_chunk * kBeta));
  const auto on_uni = run_priced(p, all_reduce(floats, "bidirectional_ring"),
                                 aware_on(DimensionKind::ring, p));
  CongestionAwareModel reference(Topology({{DimensionKind::ring, p, kBandwidth, kAlpha}}));
  const double expected = run_steps(reference, p, 2 * (p - 1), half_chunk, {1, p - 1});
  EXPECT_EQ(on_uni.makespan(), expected);
  EXPECT_GE(on_uni.makespan(), (p - 1) * on_bi.makespan());
}

INSTANTIATE_TEST_SUITE_P(Devices, CongestionAwareLaunch, ::testing::Values(4, 8));

TEST(CongestionAwareLaunch, TwoFlowsOnOneLinkTakeTurns) {
  // A unidirectional ring of 3: device 0 sends n bytes to 1 (link 0->1) and
  // n bytes to 2 (links 0->1, 1->2), both at time 0. The first (canonical
  // order) has link 0->1 to itself; the second waits for it, then crosses
  // both links store-and-forward.
  const int64_t n = 4096;
  const auto body = [&](DeviceContext& ctx, bool both) {
    const Array x = Array::full({n / 4}, DType::kFloat32, 1);
    if (ctx.position() == 0) {
      if (both) psend(ctx, x, "x", {{0, 1}});
      psend(ctx, x, "x", {{0, 2}});
    } else if (ctx.position() == 2 || both) {
      precv(ctx, {}, {n / 4}, DType::kFloat32, "x", {{0, ctx.position()}});
    }
  };
  const auto alone = run_priced(3, [&](DeviceContext& ctx) { body(ctx, false); },
                                aware_on(DimensionKind::ring, 3));
  EXPECT_EQ(alone.end_times[2], 2 * (kAlpha + n * kBeta));
  const auto shared = run_priced(3, [&](DeviceContext& ctx) { body(ctx, true); },
                                 aware_on(DimensionKind::ring, 3));
  EXPECT_EQ(shared.end_times[0], 0.0);
  EXPECT_EQ(shared.end_times[1], kAlpha + n * kBeta);
  EXPECT_EQ(shared.end_times[2], 2 * kAlpha + 3 * n * kBeta);
  // The congestion-unaware model prices the same program as if alone.
  auto unaware = std::make_shared<VirtualTime>();
  unaware->network = std::make_shared<CongestionUnawareModel>(
      Topology({{DimensionKind::ring, 3, kBandwidth, kAlpha}}));
  const auto free = run_priced(3, [&](DeviceContext& ctx) { body(ctx, true); }, unaware);
  EXPECT_LT(free.end_times[2], shared.end_times[2]);
}

TEST(CongestionAwareLaunch, IsTheSameOnEveryRunAndInBothExecutionModes) {
  // Uneven compute between collectives of several algorithms on a shared
  // network: the order of pricing depends on the clocks, never on the host.
  const auto program = [](DeviceContext& ctx) {
    Array x = Array::full({1024}, DType::kFloat32, 1);
    for (int step = 0; step < 4; ++step) {
      ctx.advance(0.001 * ((ctx.position() * 7 + step * 3) % 5));
      x = psum(ctx, x, "x", {}, step % 2 ? "ring" : "direct");
      x = ppermute(ctx, x, "x", {{0, 3}, {3, 5}, {5, 0}, {1, 2}, {2, 1}});
    }
  };
  const auto time = aware_on(DimensionKind::bidirectional_ring, 8);
  const auto first = run_priced(8, program, time).end_times;
  EXPECT_GT(first[0], 0.0);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(run_priced(8, program, time).end_times, first);
  EXPECT_EQ(run_priced(8, program, time, false, ExecutionMode::kFibers).end_times, first);
}

TEST(CongestionAwareLaunch, StartOverlapsComputeUntilDone) {
  // ppermute both ways on a bidirectional ring of 2: one hop each way.
  const double transfer = kAlpha + 1024 * kBeta;
  for (double compute : {0.0, transfer / 2, 3 * transfer}) {
    const auto record = run_priced(
        2,
        [&](DeviceContext& ctx) {
          Pending h = ppermute_start(ctx, Array::full({256}, DType::kFloat32, 1), "x",
                                     {{0, 1}, {1, 0}});
          ctx.advance(compute);
          h.done();
        },
        aware_on(DimensionKind::bidirectional_ring, 2));
    expect_all(record.end_times, std::max(compute, transfer));
  }
}

TEST(CongestionAwareLaunch, TraceTimesAreReplayed) {
  const int p = 4;
  const auto record = run_priced(p, all_reduce(p * 256, "ring"),
                                 aware_on(DimensionKind::ring, p), /*trace=*/true);
  const double expected = 2 * (p - 1) * (kAlpha + 1024 * kBeta);
  for (int position = 0; position < p; ++position) {
    const auto psums = record.events_of(position, TraceKind::kCollective, "psum");
    ASSERT_EQ(psums.size(), 1u);
    EXPECT_EQ(psums[0]->virtual_start, 0.0);
    EXPECT_EQ(psums[0]->virtual_end, expected);
    // Each receive ends one step later than the one before.
    double previous = 0;
    int receives = 0;
    for (const TraceEvent* e : record.events_of(position, TraceKind::kTransfer)) {
      if (e->from < 0) continue;
      EXPECT_EQ(e->virtual_end, previous + kAlpha + 1024 * kBeta) << "receive " << receives;
      previous = e->virtual_end;
      ++receives;
    }
    EXPECT_EQ(receives, 2 * (p - 1));
  }
}

TEST(CongestionAwareLaunch, NowIsAnErrorWhileTheLaunchRuns) {
  Runtime runtime(2);
  LaunchRecord record;
  EXPECT_ERROR(runtime.launch(Mesh::make({{"x", 2}}), [](DeviceContext& ctx) { ctx.now(); },
                              {.time = aware_on(DimensionKind::ring, 2), .record = &record}),
               RuntimeUsageError, "prices its transfers after it ends");
}

TEST(CongestionAwareLaunch, LaunchesSharingOneModelAtOnce) {
  // One model, two runtimes launching from two threads: each replay has the
  // model to itself and sees an idle network.
  const auto time = aware_on(DimensionKind::ring, 4);
  const double expected = 2 * 3 * (kAlpha + 1024 * kBeta);
  std::vector<double> makespans(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < 5; ++run) {
        makespans[t] = run_priced(4, all_reduce(1024, "ring"), time).makespan();
        if (makespans[t] != expected) return;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(makespans, std::vector<double>(2, expected));
}

TEST(CongestionAwareLaunch, ErrorsNameWhatWasWrong) {
  Runtime runtime(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  LaunchRecord record;
  // A clock that becomes infinite is found by the replay.
  EXPECT_ERROR(runtime.launch(
                   mesh,
                   [](DeviceContext& ctx) {
                     if (ctx.position() == 2) {
                       ctx.advance(1e308);
                       ctx.advance(1e308);
                     }
                   },
                   {.time = aware_on(DimensionKind::ring, 4), .record = &record}),
               InvalidArgumentError, "device 2: its virtual clock (1e+308 s) advanced by 1e+308 s is not finite");
  EXPECT_TRUE(record.end_times.empty());
  // Too many steps for the budget: a ResourceError naming the device.
  auto small = aware_on(DimensionKind::ring, 4);
  small->replay_steps = 4 * 10;
  EXPECT_ERROR(runtime.launch(
                   mesh,
                   [](DeviceContext& ctx) {
                     for (int i = 0; i < (ctx.position() == 1 ? 10 : 5); ++i) ctx.advance(1);
                   },
                   {.time = small, .record = &record}),
               ResourceError, "device 1: its clock reached 9 moves");
  small->replay_steps = 7;  // a share of one step: its start, no move
  EXPECT_ERROR(runtime.launch(mesh, [](DeviceContext&) {}, {.time = small}),
               InvalidArgumentError,
               "replay_steps (7) must give each of the 4 devices at least two steps");
  // Both a model and a simulator.
  auto both = aware_on(DimensionKind::ring, 4);
  struct Never : ExternalClock {
    double now() override { return 0; }
    void schedule(double, std::function<void()>) override {}
    void send(const ExternalMessage&, std::function<void()>) override {}
    void recv(const ExternalMessage&, std::function<void()>) override {}
    void run() override {}
  };
  both->external = std::make_shared<Never>();
  EXPECT_ERROR(runtime.launch(mesh, [](DeviceContext&) {}, {.time = both}), InvalidArgumentError,
               "both a network model and an external clock");
}

// A discrete-event simulator in the shape external_clock.h describes: a
// message arrives `alpha + bytes * beta` after it is sent, or, with
// `one_bus`, all messages share one bus in the order they were sent.
// `misbehave` makes it break the contract in one way.
class TestSimulator final : public ExternalClock {
 public:
  enum class Misbehave {
    kNo, kDropsDeliveries, kDeliversTwice, kDeliversEarly, kKeepsOne, kNanNow, kCallsAtOnce,
    kCompletesInRecv, kSendsTwice, kSendsInSend, kKeepsASend, kNeverSends
  };
  explicit TestSimulator(bool one_bus = false, Misbehave misbehave = Misbehave::kNo,
                         double alpha = kAlpha)
      : one_bus_(one_bus), misbehave_(misbehave), alpha_(alpha) {}

  double now() override {
    return misbehave_ == Misbehave::kNanNow && running_ ? std::nan("") : now_;
  }
  void schedule(double delay, std::function<void()> fn) override {
    EXPECT_GE(delay, 0.0);
    if (misbehave_ == Misbehave::kCallsAtOnce) return fn();
    events_.push({now_ + delay, next_++, std::move(fn)});
  }
  int runs() const { return runs_; }
  void send(const ExternalMessage& m, std::function<void()> on_sent) override {
    const double start = one_bus_ ? std::max(now_, bus_free_) : now_;
    const double sent = start + m.bytes * kBeta;
    if (one_bus_) bus_free_ = sent;
    arrival_[m.tag] = sent + alpha_;
    ++messages_;
    switch (misbehave_) {
      case Misbehave::kSendsInSend:
        return on_sent();
      case Misbehave::kNeverSends:
        return;
      case Misbehave::kKeepsASend:
        if (kept_ == nullptr) return void(kept_ = std::move(on_sent));
        break;
      case Misbehave::kSendsTwice:
        events_.push({sent, next_++, on_sent});
        break;
      default:
        break;
    }
    events_.push({sent, next_++, std::move(on_sent)});
  }
  void recv(const ExternalMessage& m, std::function<void()> on_received) override {
    if (misbehave_ == Misbehave::kDropsDeliveries) return;
    if (misbehave_ == Misbehave::kCompletesInRecv) return on_received();
    if (misbehave_ == Misbehave::kKeepsOne && kept_ == nullptr) {
      kept_ = std::move(on_received);
      return;
    }
    const double at = misbehave_ == Misbehave::kDeliversEarly ? now_ - 1 : arrival_.at(m.tag);
    if (misbehave_ == Misbehave::kDeliversTwice) events_.push({at, next_++, on_received});
    events_.push({at, next_++, std::move(on_received)});
  }
  void run() override {
    ++runs_;
    running_ = true;
    while (!events_.empty()) {
      Event e = events_.top();
      events_.pop();
      now_ = e.time;
      e.fn();
    }
  }
  int messages() const { return messages_; }
  std::function<void()> kept() const { return kept_; }

 private:
  struct Event {
    double time;
    int64_t order;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return std::tie(time, order) > std::tie(o.time, o.order); }
  };
  bool one_bus_;
  Misbehave misbehave_;
  double alpha_;
  bool running_ = false;
  int runs_ = 0;
  double now_ = 100.3;  // not zero: meshsim's times are relative to the replay's start
  double bus_free_ = 0;
  int64_t next_ = 0;
  int messages_ = 0;
  std::map<int64_t, double> arrival_;
  std::function<void()> kept_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
};

std::shared_ptr<VirtualTime> external(std::shared_ptr<ExternalClock> clock) {
  auto time = std::make_shared<VirtualTime>();
  time->external = std::move(clock);
  return time;
}

TEST(ExternalClockLaunch, RingAllReduceOnAFixedDelayNetwork) {
  for (int p : {2, 4, 8}) {
    auto sim = std::make_shared<TestSimulator>();
    const auto record = run_priced(p, all_reduce(p * 256, "ring"), external(sim));
    expect_all(record.end_times, 2 * (p - 1) * (kAlpha + 1024 * kBeta));
    EXPECT_EQ(sim->messages(), 2 * (p - 1) * p);
  }
}

TEST(ExternalClockLaunch, TheSimulatorDecidesHowTransfersShare) {
  // Devices 0 -> 1 and 2 -> 3 send n bytes at time 0 over one bus: the
  // second (in the order the simulator was given them) waits for the first.
  const int64_t n = 4096;
  const auto body = [&](DeviceContext& ctx) {
    const Array x = Array::full({n / 4}, DType::kFloat32, 1);
    ppermute(ctx, x, "x", {{0, 1}, {2, 3}});
  };
  auto sim = std::make_shared<TestSimulator>(/*one_bus=*/true);
  const auto record = run_priced(4, body, external(sim));
  std::vector<double> ends = {record.end_times[1], record.end_times[3]};
  std::sort(ends.begin(), ends.end());
  EXPECT_EQ(ends, (std::vector<double>{n * kBeta + kAlpha, 2 * n * kBeta + kAlpha}));
  EXPECT_EQ(record.end_times[0], 0.0);
  EXPECT_EQ(record.end_times[2], 0.0);
}

TEST(ExternalClockLaunch, ZeroCostDeliveriesKeepTheirDepartureExactly) {
  // Zero latency and zero bytes (a barrier): each arrival is its departure,
  // although the simulator's clock is far from 0 (rounding of now() - origin).
  auto sim = std::make_shared<TestSimulator>(false, TestSimulator::Misbehave::kNo, 0.0);
  const auto record = run_priced(4, [](DeviceContext& ctx) {
    ctx.advance(0.1 * (ctx.position() + 1));
    psend(ctx, Array::full({0}, DType::kFloat32, 0), "x", {{ctx.position(), (ctx.position() + 1) % 4}});
    precv(ctx, {}, {0}, DType::kFloat32, "x", {{(ctx.position() + 3) % 4, ctx.position()}});
  }, external(sim));
  // Each device's own advance, or its sender's if later: exactly those doubles.
  const std::vector<double> advanced = {0.1, 0.1 * 2, 0.1 * 3, 0.1 * 4};
  EXPECT_EQ(record.end_times, (std::vector<double>{advanced[3], advanced[1], advanced[2], advanced[3]}));
}

// The simulator sees the launch's transfers whether or not the caller asked
// for a record; so does a model's error.
TEST(ExternalClockLaunch, ALaunchWithoutARecordStillDrivesTheSimulator) {
  auto sim = std::make_shared<TestSimulator>();
  Runtime runtime(4);
  runtime.launch(Mesh::make({{"x", 4}}), all_reduce(4 * 256, "ring"), {.time = external(sim)});
  EXPECT_EQ(sim->runs(), 1);
  EXPECT_EQ(sim->messages(), 2 * 3 * 4);

  auto broken = std::make_shared<TestSimulator>(false, TestSimulator::Misbehave::kDeliversTwice);
  EXPECT_ERROR(runtime.launch(Mesh::make({{"x", 4}}), all_reduce(4 * 256, "ring"),
                              {.time = external(broken)}),
               RuntimeUsageError, "ran twice");
}

TEST(ExternalClockLaunch, AFailedLaunchIsNotReplayed) {
  auto sim = std::make_shared<TestSimulator>();
  Runtime runtime(2);
  LaunchRecord record;
  EXPECT_ERROR(runtime.launch(Mesh::make({{"x", 2}}),
                              [](DeviceContext& ctx) {
                                psum(ctx, Array::full({4}, DType::kFloat32, 1), "x");
                                if (ctx.position() == 1) throw InvalidArgumentError("user error");
                              },
                              {.time = external(sim), .record = &record, .trace = true}),
               InvalidArgumentError, "user error");
  EXPECT_EQ(sim->runs(), 0);
  EXPECT_TRUE(record.end_times.empty());
  ASSERT_FALSE(record.events.empty());
  for (const TraceEvent& e : record.events) EXPECT_EQ(e.virtual_end, 0.0);
}

TEST(CongestionAwareLaunch, AModelThatReturnsNonsenseIsNamed) {
  class Broken final : public NetworkModel {
   public:
    explicit Broken(double arrival) : arrival_(arrival) {}
    double arrival(const Transfer&) override { return arrival_; }
    bool needs_canonical_order() const override { return true; }
    void reset() override {}

   private:
    double arrival_;
  };
  Runtime runtime(2);
  LaunchRecord record;
  for (double arrival : {std::nan(""), -1.0}) {
    auto time = std::make_shared<VirtualTime>();
    time->network = std::make_shared<Broken>(arrival);
    EXPECT_ERROR(runtime.launch(Mesh::make({{"x", 2}}), all_reduce(4, "ring"),
                                {.time = time, .record = &record}),
                 InvalidArgumentError, "expected a finite time >= the departure");
  }
}

TEST(ExternalClockLaunch, ASimulatorThatBreaksTheContractIsNamed) {
  const Mesh mesh = Mesh::make({{"x", 2}});
  const auto body = all_reduce(512, "ring");
  Runtime runtime(2);
  LaunchRecord record;
  using M = TestSimulator::Misbehave;
  const auto launch_on = [&](M misbehave) {
    runtime.launch(mesh, body,
                   {.time = external(std::make_shared<TestSimulator>(false, misbehave)),
                    .record = &record});
  };
  EXPECT_ERROR(launch_on(M::kDropsDeliveries), InvalidArgumentError,
               "external clock: run() returned but: 4 of 6 clock steps of the launch still wait "
               "for a transfer, e.g. transfer 1 -> 0 (1024 bytes, departing at 0 s, sequence 1) "
               "(message tag 1) to device 0");
  EXPECT_ERROR(launch_on(M::kDeliversTwice), RuntimeUsageError, "ran twice");
  EXPECT_ERROR(launch_on(M::kDeliversEarly), InvalidArgumentError, "before it was sent at 100.3 s");
  EXPECT_ERROR(launch_on(M::kNanNow), InvalidArgumentError, "external clock: now() returned nan");
  EXPECT_ERROR(launch_on(M::kCallsAtOnce), RuntimeUsageError, "ran outside run()");
  EXPECT_ERROR(launch_on(M::kCompletesInRecv), RuntimeUsageError, "inside schedule(), send() or recv()");
  // A callback kept past the replay.
  auto keeper = std::make_shared<TestSimulator>(false, M::kKeepsOne);
  EXPECT_ERROR(runtime.launch(mesh, body, {.time = external(keeper), .record = &record}),
               InvalidArgumentError, "run() returned but");
  ASSERT_TRUE(keeper->kept() != nullptr);
  EXPECT_ERROR(keeper->kept()(), RuntimeUsageError, "after the launch's replay ended");
  // The send callback is checked as the receive's is; meshsim times nothing
  // by it, so a simulator may leave it out.
  EXPECT_ERROR(launch_on(M::kSendsTwice), RuntimeUsageError,
               "external clock: the send callback of message tag 4 ran twice");
  EXPECT_NO_THROW(launch_on(M::kSendsInSend));  // its buffer is free at once
  EXPECT_NO_THROW(launch_on(M::kNeverSends));
  auto send_keeper = std::make_shared<TestSimulator>(false, M::kKeepsASend);
  EXPECT_NO_THROW(runtime.launch(mesh, body, {.time = external(send_keeper), .record = &record}));
  ASSERT_TRUE(send_keeper->kept() != nullptr);
  EXPECT_ERROR(send_keeper->kept()(), RuntimeUsageError,
               "the send callback of message tag 4 ran after the launch's replay ended");
  // What the simulator throws reaches the caller.
  struct Throws : ExternalClock {
    double now() override { return 0; }
    void schedule(double, std::function<void()>) override {}
    void send(const ExternalMessage&, std::function<void()>) override {}
    void recv(const ExternalMessage&, std::function<void()>) override {}
    void run() override { throw std::runtime_error("simulator crashed"); }
  };
  EXPECT_THROW(runtime.launch(mesh, body,
                              {.time = external(std::make_shared<Throws>()), .record = &record}),
               std::runtime_error);
}

// A TestSimulator whose run() first calls `before_run` (a simulator's own
// use of the runtime from inside the replay).
class CallingSimulator final : public ExternalClock {
 public:
  explicit CallingSimulator(std::function<void()> before_run)
      : before_run_(std::move(before_run)) {}
  double now() override { return inner_.now(); }
  void schedule(double delay, std::function<void()> fn) override {
    inner_.schedule(delay, std::move(fn));
  }
  void send(const ExternalMessage& m, std::function<void()> on_sent) override {
    inner_.send(m, std::move(on_sent));
  }
  void recv(const ExternalMessage& m, std::function<void()> on_received) override {
    inner_.recv(m, std::move(on_received));
  }
  void run() override {
    before_run_();
    inner_.run();
  }
  int runs() const { return inner_.runs(); }

 private:
  std::function<void()> before_run_;
  TestSimulator inner_;
};

// Two devices of one fiber launch each make a launch priced by its own
// simulator; the first simulator launches on the runtime from inside its
// replay. Replays take turns: the second waits parked, so its worker runs
// the fibers of the first simulator's launch (a mutex blocked the worker:
// a hang with 2 workers, and with 1 a false "made from inside another one's
// replay", since the turn was kept per thread, which sibling fibers share).
TEST(ExternalClockLaunch, ReplaysTakeTurnsWithoutBlockingAFiberWorker) {
  for (const int workers : {1, 2}) {
    RuntimeOptions options;
    options.execution = ExecutionMode::kFibers;
    options.fiber_workers = workers;
    Runtime runtime(8, options);
    const auto on = [](std::vector<int> devices) {
      return Mesh(AbstractMesh({{"x", static_cast<int>(devices.size())}}), devices);
    };
    std::vector<std::shared_ptr<CallingSimulator>> sims(2);
    std::atomic<int> plain_ran{0};
    runtime.launch(on({0, 1}), [&](DeviceContext& ctx) {
      const int p = ctx.position();
      sims[p] = std::make_shared<CallingSimulator>([&, p] {
        if (p != 0) return;
        runtime.launch(on({6, 7}), [&](DeviceContext& c) { plain_ran += c.position(); });
      });
      runtime.launch(on(p == 0 ? std::vector{2, 3} : std::vector{4, 5}), all_reduce(256, "ring"),
                     {.time = external(sims[p])});
    });
    EXPECT_EQ(plain_ran, 1) << workers << " workers";
    EXPECT_EQ(sims[0]->runs(), 1);
    EXPECT_EQ(sims[1]->runs(), 1);
  }
}

// A launch priced after it ends, made from inside a replay by the agent that
// replays (a simulator's callback), would wait for its own turn: refused.
TEST(ExternalClockLaunch, APricedLaunchFromInsideAReplayIsRefused) {
  Runtime runtime(4);
  const Mesh mesh = Mesh::make({{"x", 2}});
  auto sim = std::make_shared<CallingSimulator>([&] {
    runtime.launch(mesh, all_reduce(256, "ring"),
                   {.time = external(std::make_shared<TestSimulator>())});
  });
  EXPECT_ERROR(runtime.launch(mesh, all_reduce(256, "ring"), {.time = external(sim)}),
               RuntimeUsageError,
               "a launch priced after it ends (congestion-aware network, external clock) was "
               "made from inside another one's replay");
}

}  // namespace
}  // namespace meshsim::deferred_time_test
