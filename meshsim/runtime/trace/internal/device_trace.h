#pragma once
// DeviceTrace: one device's event recorder for the current launch. Only the
// device's own thread (or fiber) touches it while the launch runs; the
// launching thread exports its events (export_events) once the device's body
// has returned and before the launch releases the device.
//
// The hot path stays cheap: an event is a plain RawTraceEvent (names are
// pointers and views into storage that outlives the launch: string literals,
// the algorithm registry, the mesh's group sets), written into blocks the
// device keeps from one traced launch to the next, so recording allocates
// nothing and touches no new memory once a launch has recorded as many
// events before; the strings of the public TraceEvent are built only on
// export.
//
// Events open and close in stack order (an operation's scope). When the
// device has recorded `capacity` events, open() returns kDropped (and counts
// it): every method accepts kDropped, so callers need no second branch.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "meshsim/runtime/trace/trace_event.h"

namespace meshsim {

// A TraceEvent before export (its fields, with names not yet copied): two
// cache lines, written field by field by open().
struct alignas(64) RawTraceEvent {
  TraceKind kind = TraceKind::kCollective;
  bool async = false;
  int16_t depth = 0;  // saturates at 32767
  int group_size = 0;
  int to = -1;
  int from = -1;
  const char* op = "";                            // a kWait event exports as op + "_done"
  const std::vector<std::string>* axes = nullptr;  // the group's, or none
  std::string_view algorithm;
  std::string_view chosen_by;
  int64_t bytes = 0;
  int64_t recv_bytes = 0;
  uint64_t flow_out = 0;
  uint64_t flow_in = 0;
  int64_t wall_start_ns = 0;
  int64_t wall_end_ns = 0;
  double virtual_start = 0;
  double virtual_end = 0;
};
static_assert(sizeof(RawTraceEvent) == 128, "a raw event is two cache lines");

class DeviceTrace {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kDropped = -1;

  bool on() const { return on_; }
  // At the start of the device's part of a launch: `on` says whether the
  // launch traces; `origin` is the launch's wall-time zero. `capacity` above
  // INT_MAX is INT_MAX. An untraced launch frees the blocks.
  // `agent` is the DeviceState's agent id (unique among the launch's
  // devices and cores), which keeps flow ids apart.
  void begin_launch(bool on, size_t capacity, Clock::time_point origin, int device, int core,
                    int agent, int position);
  // Appends the events recorded to `out` as TraceEvents; returns how many
  // were dropped. While the names they point to are alive (the launch).
  size_t export_events(std::vector<TraceEvent>& out) const;
  size_t size() const { return size_; }

  // Opens an event of `kind` named `op` (a string literal) at the current
  // wall time and virtual time `virtual_now`.
  int open(TraceKind kind, const char* op, double virtual_now);
  // The event `index` names, or null for kDropped. Stable until the launch ends.
  RawTraceEvent* event(int index) { return index == kDropped ? nullptr : &at(index); }
  // Closes the innermost open event, `index`, at virtual time `virtual_now`.
  void close(int index, double virtual_now);
  // An event with no wall duration spanning [virtual_start, virtual_end]
  // (annotated compute, a wait for an async result).
  void instant(TraceKind kind, const char* op, double virtual_start, double virtual_end);

  // A fresh flow id, non-zero and unique in the launch (the agent id in the
  // high bits).
  uint64_t new_flow() { return flow_base_ | (++flows_ & 0xffff'ffffu); }

  // The innermost open collective, which the algorithm choice describes
  // (DeviceHooks::record), or kDropped.
  int open_collective = kDropped;
  // Inside a *_start: the events opened are marked async.
  bool in_start = false;

 private:
  static constexpr size_t kBlockEvents = 256;
  RawTraceEvent& at(size_t index) { return blocks_[index / kBlockEvents][index % kBlockEvents]; }
  const RawTraceEvent& at(size_t index) const {
    return blocks_[index / kBlockEvents][index % kBlockEvents];
  }
  int64_t wall_now() const;

  bool on_ = false;
  size_t capacity_ = 0;
  Clock::time_point origin_{};
  int device_ = 0;
  int core_ = 0;
  int position_ = 0;
  int depth_ = 0;
  uint64_t flow_base_ = 0;
  uint64_t flows_ = 0;
  std::vector<std::unique_ptr<RawTraceEvent[]>> blocks_;  // kept across traced launches
  size_t size_ = 0;
  size_t dropped_ = 0;
};

}  // namespace meshsim
