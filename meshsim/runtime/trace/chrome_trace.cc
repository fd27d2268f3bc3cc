#include "meshsim/runtime/trace/chrome_trace.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>
#include <vector>

#include "meshsim/mesh/error.h"

namespace meshsim {
namespace {

using json = nlohmann::json;

// Thread ids: device d's own events on d * kTracksPerDevice, its starts on
// the lanes after it; the tracks of an mpmd_map's further cores on a device
// (TraceEvent::core) come after every device's.
constexpr int64_t kTracksPerDevice = 64;

// The first track of `e`'s device and core: `devices` is one past the
// largest device id of the record.
int64_t base_track(const TraceEvent& e, int64_t devices) {
  return (static_cast<int64_t>(e.device) + e.core * devices) * kTracksPerDevice;
}

int64_t device_bound(const LaunchRecord& record) {
  int64_t bound = 0;
  for (const TraceEvent& e : record.events) bound = std::max<int64_t>(bound, e.device + 1);
  return bound;
}

// One view of the launch: its process id and how an event's times read in it.
struct View {
  int pid;
  const char* name;
  bool is_virtual;
  double start_us(const TraceEvent& e) const {
    return is_virtual ? e.virtual_start * 1e6 : static_cast<double>(e.wall_start_ns) / 1e3;
  }
  double end_us(const TraceEvent& e) const {
    return is_virtual ? e.virtual_end * 1e6 : static_cast<double>(e.wall_end_ns) / 1e3;
  }
};

json arguments(const TraceEvent& e) {
  json args = json::object();
  args["position"] = e.position;
  if (!e.axes.empty()) args["axes"] = e.axes;
  if (e.group_size > 0) args["group_size"] = e.group_size;
  if (!e.algorithm.empty()) args["algorithm"] = e.algorithm;
  if (!e.chosen_by.empty()) args["chosen_by"] = e.chosen_by;
  if (e.bytes > 0) args["bytes"] = e.bytes;
  if (e.recv_bytes > 0) args["recv_bytes"] = e.recv_bytes;
  if (e.to >= 0) args["to"] = e.to;
  if (e.from >= 0) args["from"] = e.from;
  // In double: a user-built event's times may be anything, and their
  // difference overflow int64_t.
  args["wall_us"] =
      (static_cast<double>(e.wall_end_ns) - static_cast<double>(e.wall_start_ns)) / 1e3;
  args["virtual_us"] = (e.virtual_end - e.virtual_start) * 1e6;
  return args;
}

// The thread track of each event in one view: a device's own events on its
// first track; the events of each of its *_starts on the first async lane
// free at the start's begin (a start runs on a clock of its own in virtual
// time, so two may overlap each other and the device's later events).
std::vector<int64_t> tracks_of(const LaunchRecord& record, const View& view) {
  std::vector<int64_t> tracks(record.events.size());
  std::map<int64_t, std::vector<double>> lane_ends;  // base track -> when each lane frees
  int group_depth = -1;                              // depth of the start being placed
  int64_t group_track = 0;
  const int64_t devices = device_bound(record);
  for (size_t i = 0; i < record.events.size(); ++i) {
    const TraceEvent& e = record.events[i];
    const int64_t base = base_track(e, devices);
    if (!e.async) {
      tracks[i] = base;
      group_depth = -1;
      continue;
    }
    if (group_depth >= 0 && e.depth > group_depth && i > 0 &&
        record.events[i - 1].device == e.device && record.events[i - 1].core == e.core) {
      tracks[i] = group_track;  // inside the start being placed
      continue;
    }
    // A start's opening event: its events follow it, deeper, on its device.
    std::vector<double>& ends = lane_ends[base];
    size_t lane = 0;
    while (lane < ends.size() && ends[lane] > view.start_us(e)) ++lane;
    if (lane == ends.size()) {
      if (ends.size() < kTracksPerDevice - 1) ends.push_back(0);
      lane = ends.size() - 1;  // past the last lane: share it
    }
    ends[lane] = std::max(ends[lane], view.end_us(e));
    group_depth = e.depth;
    group_track = base + 1 + static_cast<int64_t>(lane);
    tracks[i] = group_track;
  }
  return tracks;
}

void add_view(json& out, const LaunchRecord& record, const View& view,
              const std::map<uint64_t, int64_t>& flow_numbers) {
  out.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", view.pid},
                 {"args", {{"name", view.name}}}});
  out.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", view.pid},
                 {"args", {{"sort_index", view.pid}}}});
  const std::vector<int64_t> tracks = tracks_of(record, view);
  std::map<int64_t, std::string> names;  // track -> name, in device order
  for (size_t i = 0; i < record.events.size(); ++i) {
    const TraceEvent& e = record.events[i];
    std::string name = "device " + std::to_string(e.device);
    if (e.core > 0) name += " core " + std::to_string(e.core);
    if (e.async) name += " async " + std::to_string(tracks[i] % kTracksPerDevice);
    names.try_emplace(tracks[i], name + " (position " + std::to_string(e.position) + ")");
  }
  for (const auto& [tid, name] : names) {
    out.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", view.pid}, {"tid", tid},
                   {"args", {{"name", name}}}});
    out.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", view.pid}, {"tid", tid},
                   {"args", {{"sort_index", tid}}}});
  }
  // Flows are matched by (cat, id): each view has its own category.
  const std::string flow_category = view.is_virtual ? "flow.virtual" : "flow.wall";
  for (size_t i = 0; i < record.events.size(); ++i) {
    const TraceEvent& e = record.events[i];
    const double start = view.start_us(e);
    const double end = view.end_us(e);
    out.push_back({{"ph", "X"},
                   {"name", e.op},
                   {"cat", trace_kind_name(e.kind)},
                   {"pid", view.pid},
                   {"tid", tracks[i]},
                   {"ts", start},
                   {"dur", end - start},
                   {"args", arguments(e)}});
    // Both ends of an arrow sit in the middle of their slice, where no
    // sibling slice begins or ends (bp "e": bound to the enclosing slice).
    const double middle = start + (end - start) / 2;
    for (const auto& [flow, phase] : {std::pair{e.flow_out, "s"}, std::pair{e.flow_in, "f"}}) {
      const auto number = flow_numbers.find(flow);
      if (flow == 0 || number == flow_numbers.end()) continue;
      json point = {{"ph", phase},          {"name", "transfer"}, {"cat", flow_category},
                    {"id", number->second}, {"pid", view.pid},    {"tid", tracks[i]},
                    {"ts", middle}};
      if (std::string_view(phase) == "f") point["bp"] = "e";
      out.push_back(std::move(point));
    }
  }
}

// Small numbers for the flows whose both ends were recorded (1, 2, ...):
// record ids exceed 2^53, which JavaScript viewers cannot hold exactly.
std::map<uint64_t, int64_t> number_flows(const LaunchRecord& record) {
  std::map<uint64_t, int> ends;
  for (const TraceEvent& e : record.events) {
    if (e.flow_out != 0) ++ends[e.flow_out];
    if (e.flow_in != 0) ++ends[e.flow_in];
  }
  std::map<uint64_t, int64_t> numbers;
  for (const auto& [flow, count] : ends) {
    if (count == 2) numbers.emplace(flow, static_cast<int64_t>(numbers.size()) + 1);
  }
  return numbers;
}

}  // namespace

std::string chrome_trace_json(const LaunchRecord& record) {
  json events = json::array();
  const std::map<uint64_t, int64_t> flows = number_flows(record);
  if (!record.end_times.empty()) add_view(events, record, {1, "virtual time", true}, flows);
  add_view(events, record, {2, "wall time", false}, flows);
  json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  doc["otherData"] = {{"generator", "meshsim"},
                      {"events_dropped", record.events_dropped},
                      {"virtual_time", !record.end_times.empty()}};
  // Names are the user's (axes, ops): bytes that are not UTF-8 become U+FFFD
  // instead of failing the export.
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

void write_chrome_trace(const LaunchRecord& record, const std::string& path) {
  // Built before the file is opened: a failure leaves an existing file as it was.
  const std::string text = chrome_trace_json(record);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw InvalidArgumentError("cannot write the trace to '" + path + "'");
  out << text;
  out.close();
  if (!out) throw InvalidArgumentError("cannot write the trace to '" + path + "' (write failed)");
}

}  // namespace meshsim
