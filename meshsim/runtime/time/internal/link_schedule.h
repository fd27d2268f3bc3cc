#pragma once
// LinkSchedule: the times one link is busy, as disjoint intervals. The
// congestion-aware model books a message on a link at the earliest time the
// message is there and the link is idle long enough for it.

#include <cstddef>
#include <map>

namespace meshsim {

class LinkSchedule {
 public:
  // Books `duration` seconds at the earliest start >= `ready` that overlaps
  // no earlier booking, and returns that start. A gap before a later booking
  // is used if the whole duration fits in it. A duration of 0 books nothing
  // and starts at `ready`. Touching bookings are merged, so a link busy
  // back to back keeps one interval.
  double book(double ready, double duration);

  // Drops the bookings that end at or before `time`. A caller that will
  // never again book a start before `time` calls it to keep the schedule
  // (and the search in book()) as short as the bookings still ahead.
  void forget_before(double time);

  // Number of disjoint busy intervals (for tests).
  size_t intervals() const { return busy_.size(); }

 private:
  std::map<double, double> busy_;  // start -> end, disjoint, not touching
};

}  // namespace meshsim
