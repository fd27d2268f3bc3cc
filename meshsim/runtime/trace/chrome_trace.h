#pragma once
// A launch's trace as Chrome trace-event JSON, which Perfetto
// (ui.perfetto.dev) and chrome://tracing open.
//
// Layout: a process "virtual time" (when the launch kept virtual time) and a
// process "wall time", each with one thread track per device ("device 3
// (position 1)") and, for devices that ran *_start collectives, lanes
// "device 3 async 1", ... (a start runs on a clock of its own, so its events
// may overlap the device's later ones and other starts'; each start takes
// the first lane free when it begins). Every event is a complete slice (ph
// "X") named after its op, its category the kind ("collective", "transfer",
// ...), its arguments the event's fields (axes, algorithm, chosen_by, bytes,
// to, from, ...). Each transfer whose send and receive were both recorded is
// a flow arrow (ph "s" / "f", category "flow.virtual" or "flow.wall", small
// numeric ids) from the middle of its send slice to the middle of its
// receive slice. Times are microseconds: virtual seconds × 1e6 on one
// process, wall nanoseconds / 1e3 since the launch began on the other. The
// document is built in memory (about 1 KB per event and view).

#include <string>

#include "meshsim/runtime/exec/launch_record.h"

namespace meshsim {

// The trace of `record` as one JSON document.
std::string chrome_trace_json(const LaunchRecord& record);

// Writes chrome_trace_json(record) to `path`; InvalidArgumentError naming the
// path when it cannot be written.
void write_chrome_trace(const LaunchRecord& record, const std::string& path);

}  // namespace meshsim
