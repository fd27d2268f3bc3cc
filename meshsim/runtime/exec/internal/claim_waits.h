#pragma once
// ClaimWaits: the launches that wait to claim a device another launch holds,
// and the cycles among those waits. One for the process: a device body may
// launch on another runtime, so a cycle may run through several.
//
// A launch cannot finish while one of its devices' bodies waits, nor while a
// launch nested in it runs; a launch that is still claiming its devices
// holds those it claimed already (in increasing agent order). So when a
// waiting launch waits, through holders and nestings, for itself, none of
// the launches on that cycle can ever finish: two host threads whose
// launches each launch on the other's device, say.
//
// The waits form a graph: wait a -> wait b when the launch holding a's device
// is b's launch or encloses it (searched with the launches as nodes between
// them, so its size grows with the waits and the nesting depth, not with
// their square). A set of waits that all reach each other (a strongly
// connected set, with a cycle) is stuck. Every so often (at most
// once per kSearchEvery, run by whichever waiting body re-checks its claim
// first) the whole graph is searched; in each stuck set the waiting device
// body with the smallest agent id (the device id, for a device of one core)
// is chosen (then the smallest address: bodies of several runtimes may share
// an agent id, and which of them is chosen is not fixed from run to run),
// and one chosen by two searches in a row gives up with a
// DeadlockError naming a cycle through it: its launch fails unless the body
// catches the error, and lets its devices go. One member per stuck set, so
// each set is broken once; a host thread's claim is part of the graph but
// never gives up (a stuck set always has a device body: host claims alone
// cannot form a cycle, since each claims one runtime's devices in increasing
// agent order).
//
// A device body that destroys another runtime waits in its destructor for
// that runtime's launches to end: that wait leads to each of them, and is
// part of the graph too, but never gives up (a destructor cannot throw). A
// body of such a launch that waits for a device the destroyer's launch holds
// closes a cycle, and gives up as above.

#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <string>

namespace meshsim {

class Launch;
class RuntimeImpl;
struct DeviceState;

class ClaimWaits {
  // One registered wait.
  struct Entry {
    const DeviceState* claimant;  // null: a host thread
    const Launch* claiming;
    const DeviceState* wanted;       // null for a destructor's wait
    const RuntimeImpl* destroying;  // a destructor's wait: the runtime it destroys
    int chosen = 0;     // searches in a row that chose it to give up
    std::string cycle;  // set once it gives up
  };

 public:
  static constexpr std::chrono::milliseconds kSearchEvery{10};

  // The process's (never destroyed: a runtime may outlive static destruction).
  static ClaimWaits& process();

  // While it lives, `claiming` (a launch being started, by the body of
  // `claimant`, or by a host thread when that is null) waits to claim
  // `wanted`, a device of any runtime. All three outlive the Wait.
  class Wait {
   public:
    Wait(const DeviceState* claimant, const Launch& claiming, const DeviceState& wanted);
    // While it lives, the body of `claimant` (in its launch) waits in the
    // destructor of `destroying`, another runtime, for its launches to end.
    Wait(const DeviceState& claimant, const RuntimeImpl& destroying);
    ~Wait();
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

    // For a wait of a device body: "" while it may go on waiting; else the
    // cycle it gives up on, described for a DeadlockError ("device 0 (in the
    // launch on ...) waits for device 1, held by the launch on ...; ...").
    std::string give_up();

   private:
    ClaimWaits& waits_;
    std::list<Entry>::iterator entry_;
  };

  // The waits registered now (for tests).
  size_t size();

 private:
  ClaimWaits() = default;

  // Under mu_: searches the graph and marks the waits that give up.
  void search();

  std::mutex mu_;  // a leaf: nothing else is locked under it
  std::list<Entry> waits_;
  std::chrono::steady_clock::time_point last_search_{};
};

}  // namespace meshsim
