#pragma once
// DeviceTrace: one device's event recorder for the current launch. Only the
// device's own thread (or fiber) touches it while the launch runs, and it
// also exports its events (export_events) once its body has returned: the
// raw events then never leave the device's core, whose next traced launch
// writes them again without taking every line back from the launching
// thread's cache (that cost ~100 ns an event). The launching thread takes
// the exported events (take_events) before the launch releases the device.
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
  // On the device, at the end of its part of the launch: the events
  // recorded as TraceEvents, kept for take_events. While the names they
  // point to are alive (the launch). Out of memory, it keeps none and
  // take_events reports it (the device's launch goes on).
  void export_events() noexcept;
  // On the launching thread, after the device's part ended: moves the
  // exported events to the end of `out` and returns how many were dropped;
  // std::bad_alloc if the export or the move ran out of memory.
  size_t take_events(std::vector<TraceEvent>& out);
  size_t exported() const { return exported_.size(); }

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
  void export_raw_events();  // may throw std::bad_alloc

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
  std::vector<TraceEvent> exported_;  // from export_events to take_events
  bool export_failed_ = false;
};

}  // namespace meshsim
