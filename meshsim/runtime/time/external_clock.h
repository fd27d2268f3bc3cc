#pragma once
// ExternalClock: lets a discrete-event simulator own time and the network
// (SimGrid, ASTRA-sim's network backends, ns-3, your own). meshsim gives it
// its transfers in the shape such simulators take them — a send and a
// matching receive with completion callbacks, events scheduled after a
// delay, the current time — and reads each transfer's arrival as the
// simulator's time when the receive completes.
//
// How a launch uses it (VirtualTime::external): the devices run the
// program; each records how its clock moves (its receives, compute,
// async joins). Once the launch ended, meshsim replays the clocks inside
// the simulator, from time origin = now():
// - a transfer departing at virtual time d is started by an event
//   schedule(origin + d - now(), fn) whose fn calls send() and recv()
//   with the same message (eager: the receive is posted when the data
//   leaves);
// - when the simulator calls the receive's callback, the transfer arrives at
//   d + (now() - the time of its send()); the receiver's clock moves, which
//   may start more transfers (scheduled from inside the callback, never in
//   the past);
// - meshsim calls run() once, and expects every transfer to have arrived
//   when it returns.
// So the simulator sees transfers at their departures in virtual time and
// may model any sharing between them (max-min fairness, packets, ...).
//
// Thread-safety: every call comes from the thread that launched, one replay
// at a time in the process (meshsim serializes them), after the launch let
// its devices go. The simulator calls the callbacks from inside run(), on
// that thread; a callback inside schedule(), send() or recv() is an error.
// Errors: a callback called twice, outside run(), inside schedule(), send()
// or recv(), or after run() returned is a RuntimeUsageError; a receive that
// completes before its send started (naming the transfer), or a now() that
// is not finite, an InvalidArgumentError. A
// callback throws its error through run() (a simulator that catches it: the
// later callbacks do nothing and the launch throws it once run() returns).
// What the simulator throws reaches the launch's caller. Nothing times out:
// a run() that never returns keeps the launch's caller waiting.
// Precision: transit times are differences of now(), so a simulator far
// from time 0 gives them the precision of its own clock.

#include <cstdint>
#include <functional>

namespace meshsim {

struct ExternalMessage {
  int source;          // topology node (VirtualTime::nodes) of the sender
  int destination;     // topology node of the receiver
  int64_t bytes;       // >= 0
  int64_t tag;         // unique among the launch's messages; send and recv share it
};

class ExternalClock {
 public:
  virtual ~ExternalClock() = default;
  // The simulator's current time, seconds.
  virtual double now() = 0;
  // Calls `fn` at now() + delay (delay >= 0).
  virtual void schedule(double delay, std::function<void()> fn) = 0;
  // The sender's side of `message`; `on_sent` when its buffer is free
  // (meshsim times nothing by it: a simulator may call it at once inside
  // send(), or never, but not twice, outside run() or after it returned).
  virtual void send(const ExternalMessage& message, std::function<void()> on_sent) = 0;
  // The receiver's side; `on_received` when all of it has arrived.
  virtual void recv(const ExternalMessage& message, std::function<void()> on_received) = 0;
  // Runs the simulator until it has no event left.
  virtual void run() = 0;
};

}  // namespace meshsim
