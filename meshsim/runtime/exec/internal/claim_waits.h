#pragma once
// ClaimWaits: the device bodies of one runtime that wait to claim a device
// another launch holds (a launch from a device body), and the cycles among
// them.
//
// A launch cannot finish while one of its devices waits, nor while a launch
// nested in it runs. So when the launch holding the device a body waits for
// itself waits, through such claims and nestings, for the launch that body
// runs in (or one enclosing it), none of them can ever finish: two host
// threads whose launches each launch on the other's device, say. The
// waiting bodies look for such a cycle every time they re-check their claim;
// the one with the smallest agent id on the cycle gives up with a
// DeadlockError (its launch fails and lets its devices go, so the others
// proceed). Every cycle has such a member, so every cycle is broken.
//
// Only waits within one runtime are seen: a cycle through launches of
// several runtimes still waits for a launch timeout.

#include <mutex>
#include <string>
#include <vector>

namespace meshsim {

struct DeviceState;

class ClaimWaits {
 public:
  // While it lives, `claimant` (a device body of this runtime, inside its
  // launch) waits to claim `wanted`, a device of this runtime.
  class Wait {
   public:
    Wait(ClaimWaits& waits, const DeviceState& claimant, const DeviceState& wanted);
    ~Wait();
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

   private:
    ClaimWaits& waits_;
    const DeviceState* claimant_;
  };

  // The cycle of waits through `claimant`'s (registered) wait, if there is
  // one and `claimant` is the member that gives up, described for a
  // DeadlockError ("device 0 (in the launch on ...) waits for device 1;
  // ..."); else "".
  std::string cycle_to_break(const DeviceState& claimant) const;

 private:
  struct Entry {
    const DeviceState* claimant;
    const DeviceState* wanted;
  };

  mutable std::mutex mu_;  // a leaf: nothing else is locked under it
  std::vector<Entry> waits_;
};

}  // namespace meshsim
