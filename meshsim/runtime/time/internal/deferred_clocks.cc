#include "meshsim/runtime/time/internal/deferred_clocks.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <string>
#include <tuple>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/time/internal/seconds_text.h"
#include "meshsim/runtime/time/internal/transfer_check.h"

namespace meshsim {
bool DeferredClocks::IssuedTransfer::operator>(const IssuedTransfer& o) const {
  return canonically_before(o.transfer, transfer);
}

DeferredClocks::DeferredClocks(const std::vector<ClockLog>& logs, std::vector<int> nodes,
                               std::vector<int> devices)
    : logs_(logs), nodes_(std::move(nodes)), devices_(std::move(devices)) {
  build();
}

DeferredClocks::~DeferredClocks() = default;

int DeferredClocks::position_of(int64_t step) const {
  return static_cast<int>(std::upper_bound(offset_.begin(), offset_.end(), step) -
                          offset_.begin()) -
         1;
}

void DeferredClocks::build() {
  const int positions = static_cast<int>(logs_.size());
  offset_.assign(positions + 1, 0);
  for (int p = 0; p < positions; ++p) {
    offset_[p + 1] = offset_[p] + static_cast<int64_t>(logs_[p].steps().size());
  }
  const int64_t total = offset_.back();
  time_.assign(total, 0.0);
  arrival_.assign(total, 0.0);
  missing_.assign(total, 0);
  users_begin_.assign(total + 1, 0);
  receivers_begin_.assign(total + 1, 0);
  // Two passes over the steps: count the users of each step, then place them.
  auto for_each_input = [&](auto&& on_use, auto&& on_feed) {
    for (int p = 0; p < positions; ++p) {
      const std::vector<ClockStep>& steps = logs_[p].steps();
      for (int32_t s = 0; s < static_cast<int32_t>(steps.size()); ++s) {
        const ClockStep& step = steps[s];
        const int64_t g = global(p, s);
        switch (step.kind) {
          case ClockStep::Kind::kStart:
            break;
          case ClockStep::Kind::kAdvance:
            on_use(global(p, step.base), g);
            break;
          case ClockStep::Kind::kJoin:
            on_use(global(p, step.base), g);
            on_use(global(p, step.other), g);
            break;
          case ClockStep::Kind::kReceive:
            on_use(global(p, step.base), g);
            on_feed(global(step.source, step.other), g, p);
            break;
          case ClockStep::Kind::kLocal:
            on_use(global(p, step.base), g);
            on_use(global(step.source, step.other), g);
            break;
        }
      }
    }
  };
  for_each_input([&](int64_t input, int64_t) { ++users_begin_[input + 1]; },
                 [&](int64_t input, int64_t, int) { ++receivers_begin_[input + 1]; });
  for (int64_t g = 0; g < total; ++g) {
    users_begin_[g + 1] += users_begin_[g];
    receivers_begin_[g + 1] += receivers_begin_[g];
  }
  users_.resize(users_begin_.back());
  receivers_.resize(receivers_begin_.back());
  receiver_positions_.resize(receivers_begin_.back());
  std::vector<int64_t> users_next(users_begin_.begin(), users_begin_.end() - 1);
  std::vector<int64_t> receivers_next(receivers_begin_.begin(), receivers_begin_.end() - 1);
  for_each_input(
      [&](int64_t input, int64_t g) {
        users_[users_next[input]++] = g;
        ++missing_[g];
      },
      [&](int64_t input, int64_t g, int position) {
        receiver_positions_[receivers_next[input]] = position;
        receivers_[receivers_next[input]++] = g;
        ++missing_[g];  // its arrival
      });
  for (int64_t g = 0; g < total; ++g) {
    if (missing_[g] == 0) ready_.push_back(g);
  }
}

Transfer DeferredClocks::transfer_of(int64_t receive) const {
  return transfer_of(receive, position_of(receive));
}

Transfer DeferredClocks::transfer_of(int64_t receive, int position) const {
  const ClockStep& step = logs_[position].steps()[receive - offset_[position]];
  return Transfer{nodes_[step.source], nodes_[position], step.bytes,
                  time_[global(step.source, step.other)], receive};
}

void DeferredClocks::evaluate(int64_t g) {
  const int position = position_of(g);
  const ClockStep& step = logs_[position].steps()[g - offset_[position]];
  const int64_t base = global(position, step.base);
  double t = 0;
  switch (step.kind) {
    case ClockStep::Kind::kStart:
      break;
    case ClockStep::Kind::kAdvance:
      t = time_[base] + step.seconds;
      if (!std::isfinite(t)) throw_non_finite_clock(devices_[position], time_[base], step.seconds);
      break;
    case ClockStep::Kind::kJoin:
      t = std::max(time_[base], time_[global(position, step.other)]);
      break;
    case ClockStep::Kind::kReceive:
      t = std::max(time_[base], arrival_[g]);
      break;
    case ClockStep::Kind::kLocal: {
      const double sent = time_[global(step.source, step.other)];
      const double landed = sent + step.seconds;
      if (!std::isfinite(landed)) throw_non_finite_clock(devices_[position], sent, step.seconds);
      t = std::max(time_[base], landed);
      break;
    }
  }
  time_[g] = t;
  ++evaluated_;
  for (int64_t i = users_begin_[g]; i < users_begin_[g + 1]; ++i) {
    if (--missing_[users_[i]] == 0) ready_.push_back(users_[i]);
  }
  for (int64_t i = receivers_begin_[g]; i < receivers_begin_[g + 1]; ++i) {
    issued_.push_back({transfer_of(receivers_[i], receiver_positions_[i])});
  }
}

void DeferredClocks::drain() {
  while (!ready_.empty()) {
    const int64_t g = ready_.back();
    ready_.pop_back();
    evaluate(g);
  }
}

void DeferredClocks::resolve(int64_t receive, double arrival) {
  arrival_[receive] = arrival;
  if (--missing_[receive] == 0) ready_.push_back(receive);
}

void DeferredClocks::check_all_evaluated(const std::string& what) const {
  if (evaluated_ == offset_.back()) return;
  // Name a transfer still awaited whose departure is known, if any.
  std::string example;
  for (int p = 0; p < static_cast<int>(logs_.size()) && example.empty(); ++p) {
    const std::vector<ClockStep>& steps = logs_[p].steps();
    for (int32_t s = 0; s < static_cast<int32_t>(steps.size()); ++s) {
      const int64_t g = global(p, s);
      if (steps[s].kind != ClockStep::Kind::kReceive || missing_[g] == 0) continue;
      // Issued (its sender's step is known) and not arrived (only its base may wait).
      const int64_t source = global(steps[s].source, steps[s].other);
      if (missing_[source] != 0 || missing_[g] != 1 + (missing_[global(p, steps[s].base)] != 0)) {
        continue;
      }
      example = ", e.g. " + describe(transfer_of(g)) + " (message tag " + std::to_string(g) +
                ") to device " + std::to_string(devices_[p]);
      break;
    }
  }
  throw InvalidArgumentError(what + ": " + std::to_string(offset_.back() - evaluated_) + " of " +
                             std::to_string(offset_.back()) +
                             " clock steps of the launch still wait for a transfer" + example);
}

void DeferredClocks::price(NetworkModel& model) {
  model.reset();
  std::priority_queue<IssuedTransfer, std::vector<IssuedTransfer>, std::greater<>> pending;
  auto take_issued = [&] {
    drain();
    for (const IssuedTransfer& t : issued_) pending.push(t);
    issued_.clear();
  };
  take_issued();
  while (!pending.empty()) {
    const IssuedTransfer next = pending.top();
    pending.pop();
    const Transfer& transfer = next.transfer;
    resolve(next.transfer.sequence,
            checked_arrival(model.arrival(transfer), transfer, "the network model"));
    take_issued();
  }
  check_all_evaluated("network model");
}

// The state the simulator's callbacks reach through a weak reference, so a
// callback after the replay ended is told so instead of touching freed memory.
struct DeferredClocks::ExternalRun {
  DeferredClocks* self;  // null once the replay ended
  ExternalClock& clock;
  double origin;
  bool running = false;            // inside clock.run()
  int in_call = 0;                 // inside schedule(), send() or recv()
  std::vector<uint8_t> departed;   // by global index of a receive
  std::vector<uint8_t> sent;       // by global index of a receive: on_sent ran
  std::vector<uint8_t> delivered;  // by global index of a receive
  std::exception_ptr error;        // the first error raised in a callback

  // The simulator's time; InvalidArgumentError unless finite.
  double now() const {
    const double t = clock.now();
    if (!std::isfinite(t)) throw InvalidArgumentError("external clock: now() returned " + seconds_text(t));
    return t;
  }
};

namespace {

// Runs `body` for the callback `what` of message `tag` of the replay `weak`.
// A callback after the replay ended, or outside run(), is a
// RuntimeUsageError; so is one inside schedule(), send() or recv() unless
// `inside_calls` (a send's callback: its buffer may be free at once). The
// first error is recorded (a simulator might swallow it; the replay
// rethrows it once run() returns) and thrown; once there is one, callbacks
// do nothing.
template <class Run, class Body>
void in_callback(const std::weak_ptr<Run>& weak, const char* what, int64_t tag, Body body,
                 bool inside_calls = false) {
  const std::shared_ptr<Run> run = weak.lock();
  auto where = [&] {
    return std::string("external clock: the ") + what + " of message tag " + std::to_string(tag);
  };
  if (run == nullptr || run->self == nullptr) {
    throw RuntimeUsageError(where() + " ran after the launch's replay ended");
  }
  if (run->error != nullptr) return;
  try {
    if (!run->running || (run->in_call > 0 && !inside_calls)) {
      throw RuntimeUsageError(where() + " ran outside run(), or inside schedule(), send() or recv()");
    }
    body(run);
  } catch (...) {
    run->error = std::current_exception();
    throw;
  }
}

// Marks `done[index]`; RuntimeUsageError if it was already: "the <which()>
// ran twice".
void mark_once(std::vector<uint8_t>& done, int64_t index,
               const std::function<std::string()>& which) {
  if (done[index]) throw RuntimeUsageError("external clock: the " + which() + " ran twice");
  done[index] = 1;
}

}  // namespace

void DeferredClocks::schedule_issued(const std::shared_ptr<ExternalRun>& run) {
  // Equal departures reach the simulator in canonical order, as a model's.
  std::vector<IssuedTransfer> batch = std::move(run->self->issued_);
  run->self->issued_.clear();
  std::sort(batch.begin(), batch.end(),
            [](const IssuedTransfer& a, const IssuedTransfer& b) { return b > a; });
  const std::weak_ptr<ExternalRun> weak = run;
  struct InCall {
    int& depth;
    explicit InCall(int& d) : depth(d) { ++depth; }
    ~InCall() { --depth; }
  };
  for (const IssuedTransfer& t : batch) {
    const int64_t receive = t.transfer.sequence;
    const double delay = std::max(0.0, t.transfer.departure - (run->now() - run->origin));
    const InCall in_schedule(run->in_call);
    run->clock.schedule(delay, [weak, receive] {
      in_callback(weak, "scheduled departure", receive, [&](const std::shared_ptr<ExternalRun>& run) {
        mark_once(run->departed, receive, [&] {
          return "scheduled departure of message tag " + std::to_string(receive);
        });
        const Transfer transfer = run->self->transfer_of(receive);
        const ExternalMessage message{transfer.source, transfer.destination, transfer.bytes,
                                      receive};
        const double sent_at = run->now();
        const InCall in_send(run->in_call);
        run->clock.send(message, [weak, receive] {
          in_callback(
              weak, "send callback", receive,
              [&](const std::shared_ptr<ExternalRun>& run) {
                mark_once(run->sent, receive, [&] {
                  return "send callback of message tag " + std::to_string(receive);
                });
              },
              /*inside_calls=*/true);
        });
        run->clock.recv(message, [weak, receive, sent_at] {
          in_callback(weak, "receive callback", receive, [&](const std::shared_ptr<ExternalRun>& run) {
            run->self->deliver(run, receive, sent_at);
          });
        });
      });
    });
  }
}

void DeferredClocks::deliver(const std::shared_ptr<ExternalRun>& run, int64_t receive,
                             double sent_at) {
  const Transfer transfer = transfer_of(receive);
  auto which = [&] {
    return describe(transfer) + " (message tag " + std::to_string(receive) + ")";
  };
  // (Marked before the checks below: once one fails, callbacks do nothing.)
  mark_once(run->delivered, receive, [&] { return "receive callback of " + which(); });
  const double now = run->now();
  if (now < sent_at) {
    throw InvalidArgumentError("external clock: " + which() + " arrived at " + seconds_text(now) +
                               " s of the simulator's time, before it was sent at " +
                               seconds_text(sent_at) + " s");
  }
  // The departure plus the time the simulator took, both differences of its
  // own times: a zero-cost delivery arrives at its departure exactly, however
  // far the simulator's clock is from 0.
  const double arrival = transfer.departure + (now - sent_at);
  if (!std::isfinite(arrival)) {
    throw InvalidArgumentError("external clock: " + which() + " arrives at " +
                               seconds_text(arrival) + " s of virtual time");
  }
  resolve(receive, arrival);
  drain();
  schedule_issued(run);
}

void DeferredClocks::price(ExternalClock& clock) {
  const double origin = clock.now();
  if (!std::isfinite(origin)) {
    throw InvalidArgumentError("external clock: now() returned " + seconds_text(origin));
  }
  const int64_t total = offset_.back();
  auto run = std::make_shared<ExternalRun>(
      ExternalRun{this, clock, origin, false, 0, std::vector<uint8_t>(total, 0),
                  std::vector<uint8_t>(total, 0), std::vector<uint8_t>(total, 0), nullptr});
  struct Ended {
    ExternalRun& run;
    ~Ended() { run.self = nullptr; }
  } ended{*run};
  drain();
  schedule_issued(run);
  run->running = true;
  clock.run();
  run->running = false;
  if (run->error != nullptr) std::rethrow_exception(run->error);
  check_all_evaluated("external clock: run() returned but");
}

double DeferredClocks::seconds(int position, double reading) const {
  return time_[global(position, static_cast<int32_t>(reading))];
}

}  // namespace meshsim
