#pragma once
// LaunchRecord: what a launch leaves behind for its caller (LaunchOptions::record)
// — each device's virtual clock at its end and, when the launch was traced,
// every event of every device.

#include <cstddef>
#include <string_view>
#include <vector>

#include "meshsim/runtime/trace/trace_event.h"

namespace meshsim {

struct LaunchRecord {
  // Each device's clock when its body returned, by mesh position. Empty
  // when the launch ran without virtual time or failed (each device's clock
  // stopped wherever it was cancelled, which varies from run to run), and
  // when it priced after it ended (virtual_time.h) and its replay failed (the
  // launch throws the replay's error unless it has an error of its own, e.g.
  // unreceived messages) or its trace could not be exported.
  std::vector<double> end_times;
  // The latest of end_times (0 when empty): the program's modeled duration.
  double makespan() const;

  // With LaunchOptions::trace: every device's events, by mesh position, each
  // device's in the order they began. Empty otherwise. A failed launch keeps
  // the events its devices recorded before they stopped: how far each got
  // varies from run to run.
  std::vector<TraceEvent> events;
  // Events not kept because a device reached LaunchOptions::trace_capacity.
  size_t events_dropped = 0;

  // The events of mesh position `position` of kind `kind` and, when `op` is
  // not empty, that op — e.g. the collectives position 0 ran:
  //   record.events_of(0, TraceKind::kCollective, "psum")
  std::vector<const TraceEvent*> events_of(int position, TraceKind kind,
                                           std::string_view op = {}) const;
};

}  // namespace meshsim
