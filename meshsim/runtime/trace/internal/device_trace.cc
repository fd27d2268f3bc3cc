#include "meshsim/runtime/trace/internal/device_trace.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <new>

namespace meshsim {

void DeviceTrace::begin_launch(bool on, size_t capacity, Clock::time_point origin, int device,
                               int core, int agent, int position) {
  on_ = on;
  // open() returns an int index.
  capacity_ = std::min<size_t>(capacity, std::numeric_limits<int>::max());
  origin_ = origin;
  device_ = device;
  core_ = core;
  position_ = position;
  depth_ = 0;
  // Agent ids are below 2^31, so the id + 1 above 32 bits of count is
  // non-zero and unique (a device would need 2^32 transfers in one launch to wrap).
  flow_base_ = static_cast<uint64_t>(agent + 1) << 32;
  flows_ = 0;
  size_ = 0;
  dropped_ = 0;
  open_collective = kDropped;
  in_start = false;
  if (!on) blocks_.clear();
}

int64_t DeviceTrace::wall_now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
}

int DeviceTrace::open(TraceKind kind, const char* op, double virtual_now) {
  if (size_ >= capacity_) {
    ++depth_;
    ++dropped_;
    return kDropped;
  }
  if (size_ == blocks_.size() * kBlockEvents) {
    blocks_.push_back(std::make_unique<RawTraceEvent[]>(kBlockEvents));  // may throw: nothing counted yet
  }
  RawTraceEvent& e = at(size_);
  // Every field, one by one (cheaper than assigning a fresh struct).
  e.kind = kind;
  e.async = in_start;
  e.depth = static_cast<int16_t>(std::min(depth_++, int{std::numeric_limits<int16_t>::max()}));
  e.group_size = 0;
  e.to = -1;
  e.from = -1;
  e.op = op;
  e.axes = nullptr;
  e.algorithm = {};
  e.chosen_by = {};
  e.bytes = 0;
  e.recv_bytes = 0;
  e.flow_out = 0;
  e.flow_in = 0;
  // An event that is never closed (its scope threw) reads as zero length.
  e.virtual_start = e.virtual_end = virtual_now;
  e.wall_start_ns = e.wall_end_ns = wall_now();
  return static_cast<int>(size_++);
}

void DeviceTrace::close(int index, double virtual_now) {
  --depth_;
  if (index == kDropped) return;
  RawTraceEvent& e = at(index);
  e.wall_end_ns = wall_now();
  e.virtual_end = virtual_now;
}

void DeviceTrace::instant(TraceKind kind, const char* op, double virtual_start,
                          double virtual_end) {
  const int index = open(kind, op, virtual_start);
  close(index, virtual_end);
}

void DeviceTrace::export_events() noexcept {
  exported_.clear();
  export_failed_ = false;
  try {
    export_raw_events();
  } catch (const std::bad_alloc&) {
    std::vector<TraceEvent>().swap(exported_);
    export_failed_ = true;
  }
}

void DeviceTrace::export_raw_events() {
  exported_.reserve(size_);
  for (size_t i = 0; i < size_; ++i) {
    const RawTraceEvent& r = at(i);
    TraceEvent& e = exported_.emplace_back();
    e.kind = r.kind;
    e.device = device_;
    e.core = core_;
    e.position = position_;
    e.op = r.op;
    if (r.kind == TraceKind::kWait) e.op += "_done";
    if (r.axes != nullptr) {
      for (const std::string& axis : *r.axes) {
        if (!e.axes.empty()) e.axes += ',';
        e.axes += axis;
      }
    }
    e.group_size = r.group_size;
    e.algorithm = r.algorithm;
    e.chosen_by = r.chosen_by;
    e.bytes = r.bytes;
    e.recv_bytes = r.recv_bytes;
    e.to = r.to;
    e.from = r.from;
    e.flow_out = r.flow_out;
    e.flow_in = r.flow_in;
    e.depth = r.depth;
    e.async = r.async;
    e.wall_start_ns = r.wall_start_ns;
    e.wall_end_ns = r.wall_end_ns;
    e.virtual_start = r.virtual_start;
    e.virtual_end = r.virtual_end;
  }
}

size_t DeviceTrace::take_events(std::vector<TraceEvent>& out) {
  if (export_failed_) throw std::bad_alloc();
  out.insert(out.end(), std::make_move_iterator(exported_.begin()),
             std::make_move_iterator(exported_.end()));
  std::vector<TraceEvent>().swap(exported_);  // kept only from export to take
  return dropped_;
}

}  // namespace meshsim
