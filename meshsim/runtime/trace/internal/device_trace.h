#pragma once
// DeviceTrace: one device's event recorder for the current launch. Only the
// device's own thread (or fiber) touches it while the launch runs; the
// launch moves its events out when the device's body has returned.
//
// Events open and close in stack order (an operation's scope); the index
// open() returns stays valid until the launch ends. When the device has
// recorded `capacity` events, open() returns kDropped (and counts it): every
// method accepts kDropped, so callers need no second branch. A capacity
// above INT_MAX is INT_MAX.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "meshsim/runtime/trace/trace_event.h"

namespace meshsim {

class DeviceTrace {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kDropped = -1;

  bool on() const { return on_; }
  // At the start of the device's part of a launch: `on` says whether the
  // launch traces; `origin` is the launch's wall-time zero.
  void begin_launch(bool on, size_t capacity, Clock::time_point origin, int device, int position);
  // The events recorded, moved out, and how many were dropped.
  std::vector<TraceEvent> take_events() { return std::move(events_); }
  size_t dropped() const { return dropped_; }

  // Opens an event of `kind` named `op` at the current wall time and virtual
  // time `virtual_now`.
  int open(TraceKind kind, std::string_view op, double virtual_now);
  // The event `index` names, or null for kDropped.
  TraceEvent* event(int index) { return index == kDropped ? nullptr : &events_[index]; }
  // Closes the innermost open event, `index`, at virtual time `virtual_now`.
  void close(int index, double virtual_now);
  // An event with no wall duration spanning [virtual_start, virtual_end]
  // (annotated compute).
  void instant(TraceKind kind, std::string_view op, double virtual_start, double virtual_end);

  // A fresh flow id, non-zero and unique in the launch (the device id in the
  // high bits).
  uint64_t new_flow() { return flow_base_ | (++flows_ & 0xffff'ffffu); }

  // The innermost open collective, which the algorithm choice describes
  // (DeviceHooks::record), or kDropped.
  int open_collective = kDropped;
  // Inside a *_start: the events opened are marked async.
  bool in_start = false;

 private:
  int64_t wall_now() const;

  bool on_ = false;
  size_t capacity_ = 0;
  Clock::time_point origin_{};
  int device_ = 0;
  int position_ = 0;
  int depth_ = 0;
  uint64_t flow_base_ = 0;
  uint64_t flows_ = 0;
  std::vector<TraceEvent> events_;
  size_t dropped_ = 0;
};

}  // namespace meshsim
