#include "meshsim/runtime/time/internal/link_schedule.h"

#include <iterator>

namespace meshsim {

double LinkSchedule::book(double ready, double duration) {
  if (duration <= 0) return ready;
  double start = ready;
  auto next = busy_.upper_bound(start);  // first booking starting after `start`
  if (next != busy_.begin()) {
    auto previous = std::prev(next);
    if (previous->second > start) start = previous->second;  // `ready` falls in it
  }
  while (next != busy_.end() && next->first < start + duration) {
    start = next->second;  // does not fit before `next`: try after it
    ++next;
  }
  const double end = start + duration;
  // Merge with a booking ending exactly at `start` and one starting at `end`.
  double merged_start = start;
  double merged_end = end;
  if (next != busy_.begin()) {
    auto previous = std::prev(next);
    if (previous->second == start) {
      merged_start = previous->first;
      busy_.erase(previous);
    }
  }
  if (next != busy_.end() && next->first == end) {
    merged_end = next->second;
    busy_.erase(next);
  }
  busy_[merged_start] = merged_end;
  return start;
}

void LinkSchedule::forget_before(double time) {
  while (!busy_.empty() && busy_.begin()->second <= time) busy_.erase(busy_.begin());
}

}  // namespace meshsim
