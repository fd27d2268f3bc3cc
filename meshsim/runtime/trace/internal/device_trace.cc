#include "meshsim/runtime/trace/internal/device_trace.h"

#include <algorithm>
#include <limits>

namespace meshsim {

void DeviceTrace::begin_launch(bool on, size_t capacity, Clock::time_point origin, int device,
                               int position) {
  on_ = on;
  // open() returns an int index.
  capacity_ = std::min<size_t>(capacity, std::numeric_limits<int>::max());
  origin_ = origin;
  device_ = device;
  position_ = position;
  depth_ = 0;
  // Device ids are below 2^31, so the id + 1 above 32 bits of count is
  // non-zero and unique (a device would need 2^32 transfers in one launch to wrap).
  flow_base_ = static_cast<uint64_t>(device + 1) << 32;
  flows_ = 0;
  events_.clear();
  dropped_ = 0;
  open_collective = kDropped;
  in_start = false;
}

int64_t DeviceTrace::wall_now() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin_).count();
}

int DeviceTrace::open(TraceKind kind, std::string_view op, double virtual_now) {
  if (events_.size() >= capacity_) {
    ++depth_;
    ++dropped_;
    return kDropped;
  }
  TraceEvent& e = events_.emplace_back();  // may throw: nothing counted yet
  e.kind = kind;
  e.device = device_;
  e.position = position_;
  e.op = op;
  e.depth = depth_++;
  e.async = in_start;
  // An event that is never closed (its scope threw) reads as zero length.
  e.virtual_start = e.virtual_end = virtual_now;
  e.wall_start_ns = e.wall_end_ns = wall_now();
  return static_cast<int>(events_.size() - 1);
}

void DeviceTrace::close(int index, double virtual_now) {
  --depth_;
  if (index == kDropped) return;
  TraceEvent& e = events_[index];
  e.wall_end_ns = wall_now();
  e.virtual_end = virtual_now;
}

void DeviceTrace::instant(TraceKind kind, std::string_view op, double virtual_start,
                          double virtual_end) {
  const int index = open(kind, op, virtual_start);
  close(index, virtual_end);
}

}  // namespace meshsim
