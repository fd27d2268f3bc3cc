#pragma once
// take_oldest: what a semaphore wait does to a queue of the signals pending
// on it (the race detector's clocks, the virtual-time stamps): it takes
// `units` from the oldest entries first, a signal possibly only in part.
// Internal to runtime/.

#include <algorithm>
#include <cstdint>
#include <deque>

namespace meshsim {

// Calls `touched(entry)` for each entry `units` reach (each `Entry` has a
// `uint32_t units`), takes their units and drops the entries left empty.
// Fewer units queued than asked for takes them all.
template <class Entry, class Touched>
void take_oldest(std::deque<Entry>& pending, uint32_t units, Touched touched) {
  while (units > 0 && !pending.empty()) {
    Entry& oldest = pending.front();
    touched(oldest);
    const uint32_t taken = std::min(units, oldest.units);
    units -= taken;
    oldest.units -= taken;
    if (oldest.units == 0) pending.pop_front();
  }
}

}  // namespace meshsim
