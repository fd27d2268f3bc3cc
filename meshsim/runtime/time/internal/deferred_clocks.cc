#include "meshsim/runtime/time/internal/deferred_clocks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>
#include <string>
#include <tuple>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"

namespace meshsim {
namespace {

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", seconds);
  return text;
}

}  // namespace

// An issued transfer, ordered canonically (network_model.h); its sequence
// is its receive step's global index, fixed by the program.
struct DeferredClocks::Pending {
  double departure;
  int source;
  int destination;
  int64_t receive;
  bool operator>(const Pending& o) const {
    return std::tie(departure, source, destination, receive) >
           std::tie(o.departure, o.source, o.destination, o.receive);
  }
};

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
            on_feed(global(step.source, step.other), g);
            break;
        }
      }
    }
  };
  for_each_input([&](int64_t input, int64_t) { ++users_begin_[input + 1]; },
                 [&](int64_t input, int64_t) { ++receivers_begin_[input + 1]; });
  for (int64_t g = 0; g < total; ++g) {
    users_begin_[g + 1] += users_begin_[g];
    receivers_begin_[g + 1] += receivers_begin_[g];
  }
  users_.resize(users_begin_.back());
  receivers_.resize(receivers_begin_.back());
  std::vector<int64_t> users_next(users_begin_.begin(), users_begin_.end() - 1);
  std::vector<int64_t> receivers_next(receivers_begin_.begin(), receivers_begin_.end() - 1);
  for_each_input(
      [&](int64_t input, int64_t g) {
        users_[users_next[input]++] = g;
        ++missing_[g];
      },
      [&](int64_t input, int64_t g) {
        receivers_[receivers_next[input]++] = g;
        ++missing_[g];  // its arrival
      });
  for (int64_t g = 0; g < total; ++g) {
    if (missing_[g] == 0) ready_.push_back(g);
  }
}

Transfer DeferredClocks::transfer_of(int64_t receive) const {
  const int position = position_of(receive);
  const ClockStep& step = logs_[position].steps()[receive - offset_[position]];
  return Transfer{nodes_[step.source], nodes_[position], step.bytes,
                  time_[global(step.source, step.other)], receive};
}

void DeferredClocks::evaluate(int64_t g, Issue issue, void* context) {
  const int position = position_of(g);
  const ClockStep& step = logs_[position].steps()[g - offset_[position]];
  const int64_t base = global(position, step.base);
  double t = 0;
  switch (step.kind) {
    case ClockStep::Kind::kStart:
      break;
    case ClockStep::Kind::kAdvance:
      t = time_[base] + step.seconds;
      if (!std::isfinite(t)) {
        throw InvalidArgumentError("device " + std::to_string(devices_[position]) +
                                   ": its virtual clock (" + seconds_text(time_[base]) +
                                   " s) advanced by " + seconds_text(step.seconds) +
                                   " s is not finite");
      }
      break;
    case ClockStep::Kind::kJoin:
      t = std::max(time_[base], time_[global(position, step.other)]);
      break;
    case ClockStep::Kind::kReceive:
      t = std::max(time_[base], arrival_[g]);
      break;
  }
  time_[g] = t;
  ++evaluated_;
  for (int64_t i = users_begin_[g]; i < users_begin_[g + 1]; ++i) {
    if (--missing_[users_[i]] == 0) ready_.push_back(users_[i]);
  }
  for (int64_t i = receivers_begin_[g]; i < receivers_begin_[g + 1]; ++i) {
    issue(context, receivers_[i], t);
  }
}

void DeferredClocks::drain(Issue issue, void* context) {
  while (!ready_.empty()) {
    const int64_t g = ready_.back();
    ready_.pop_back();
    evaluate(g, issue, context);
  }
}

void DeferredClocks::resolve(int64_t receive, double arrival) {
  arrival_[receive] = arrival;
  if (--missing_[receive] == 0) ready_.push_back(receive);
}

void DeferredClocks::check_all_evaluated(const char* what) const {
  if (evaluated_ == offset_.back()) return;
  throw InvalidArgumentError(std::string(what) + ": " +
                             std::to_string(offset_.back() - evaluated_) + " of " +
                             std::to_string(offset_.back()) +
                             " clock steps of the launch are still waiting for a transfer");
}

void DeferredClocks::price(NetworkModel& model) {
  model.reset();
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  struct Context {
    DeferredClocks& self;
    decltype(pending)& queue;
  } context{*this, pending};
  const Issue issue = [](void* c, int64_t receive, double departure) {
    auto& [self, queue] = *static_cast<Context*>(c);
    const Transfer t = self.transfer_of(receive);
    queue.push({departure, t.source, t.destination, receive});
  };
  drain(issue, &context);
  while (!pending.empty()) {
    const Pending next = pending.top();
    pending.pop();
    resolve(next.receive, model.arrival(transfer_of(next.receive)));
    drain(issue, &context);
  }
  check_all_evaluated("network model");
}

// The state the simulator's callbacks reach through a weak reference, so a
// callback after the replay ended is told so instead of touching freed memory.
struct DeferredClocks::ExternalRun {
  DeferredClocks* self;  // null once the replay ended
  ExternalClock& clock;
  double origin;
  std::vector<uint8_t> delivered;  // by global index of a receive
  std::exception_ptr error;        // the first error raised in a callback
};

namespace {

ExternalMessage message_of(const Transfer& t) {
  return ExternalMessage{t.source, t.destination, t.bytes, t.sequence};
}

// Runs `body` for a callback of message `tag` of the replay `weak`; records
// the first error it raises (a simulator might swallow it) and rethrows it.
template <class Run, class Body>
void in_callback(const std::weak_ptr<Run>& weak, const char* what, int64_t tag, Body body) {
  const std::shared_ptr<Run> run = weak.lock();
  if (run == nullptr || run->self == nullptr) {
    throw RuntimeUsageError(std::string("external clock: the ") + what + " of message tag " +
                            std::to_string(tag) + " ran after the launch's replay ended");
  }
  try {
    body(*run);
  } catch (...) {
    if (run->error == nullptr) run->error = std::current_exception();
    throw;
  }
}

}  // namespace

// Schedules the departure of receive `receive`'s transfer in the simulator;
// `context` is the replay's weak reference.
void DeferredClocks::issue_external(void* context, int64_t receive, double departure) {
  std::weak_ptr<ExternalRun> weak = *static_cast<std::weak_ptr<ExternalRun>*>(context);
  const std::shared_ptr<ExternalRun> locked = weak.lock();  // the replay runs: it is alive
  ExternalRun& run = *locked;
  const double delay = std::max(0.0, departure - (run.clock.now() - run.origin));
  run.clock.schedule(delay, [weak, receive] {
    in_callback(weak, "scheduled departure", receive, [&](ExternalRun& run) {
      const ExternalMessage message = message_of(run.self->transfer_of(receive));
      run.clock.send(message, [] {});
      run.clock.recv(message, [weak, receive] {
        in_callback(weak, "receive callback", receive,
                    [&](ExternalRun& run) { run.self->deliver(run, weak, receive); });
      });
    });
  });
}

void DeferredClocks::deliver(ExternalRun& run, std::weak_ptr<ExternalRun> weak, int64_t receive) {
  const Transfer transfer = transfer_of(receive);
  auto which = [&] {
    return describe(transfer) + " (message tag " + std::to_string(receive) + ")";
  };
  if (run.delivered[receive]) {
    throw RuntimeUsageError("external clock: the receive callback of " + which() + " ran twice");
  }
  const double arrival = run.clock.now() - run.origin;
  if (!std::isfinite(arrival) || arrival < transfer.departure) {
    throw InvalidArgumentError("external clock: " + which() + " arrived at " +
                               seconds_text(arrival) + " s, before it departed");
  }
  run.delivered[receive] = 1;
  resolve(receive, arrival);
  drain(&DeferredClocks::issue_external, &weak);
}

void DeferredClocks::price(ExternalClock& clock) {
  auto run = std::make_shared<ExternalRun>(
      ExternalRun{this, clock, clock.now(), std::vector<uint8_t>(offset_.back(), 0), nullptr});
  struct Ended {
    ExternalRun& run;
    ~Ended() { run.self = nullptr; }
  } ended{*run};
  if (!std::isfinite(run->origin)) {
    throw InvalidArgumentError("external clock: now() returned " + seconds_text(run->origin));
  }
  std::weak_ptr<ExternalRun> weak = run;
  drain(&DeferredClocks::issue_external, &weak);
  clock.run();
  if (run->error != nullptr) std::rethrow_exception(run->error);
  check_all_evaluated("external clock: run() returned but");
}

double DeferredClocks::seconds(int position, double reading) const {
  return time_[global(position, static_cast<int32_t>(reading))];
}

}  // namespace meshsim
