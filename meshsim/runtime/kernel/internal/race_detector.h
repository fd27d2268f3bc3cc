#pragma once
// RaceDetector: a kernel's happens-before relation, by vector clocks, and
// the accesses to every symmetric buffer, for KernelSpec::set_race_detection.
// Internal to runtime/.
//
// Actors: each device (its code; in an mpmd_map, each function on a device)
// and, per device, the two sides of the DMAs it started: their reads of
// sources and their writes of destinations, so that a copy's send signal
// (its source was read) does not order its write. Actors are numbered by
// launch position. An actor's clocks are touched only by its device's (or
// core's) thread; a semaphore's pending signals and a buffer's access history by
// anyone, under the lock of the shard that owns them.
//   - an access by an actor ticks its own component, then is checked
//     against the buffer's history: a conflicting access (overlapping bytes,
//     one of them a write) whose epoch the actor's clock does not cover is a
//     DataRaceError naming both;
//   - a signal carries the signaller's clock; a wait taking n units joins
//     the clocks of the oldest n units signalled;
//   - a copy's start joins the device's clock into its reader's and its
//     writer's, ticks each, and records the DMA's read as the reader's and
//     its write as the writer's (not checked against its own read: a copy
//     onto itself, or onto the memory it reads from, which a device's cores
//     share). Its send signal carries the reader's clock; its receive signal
//     the writer's joined with the reader's, since a DMA writes after it
//     read. The copies a device started are ordered among themselves:
//     waiting for a later one's receive also orders an earlier one's read
//     and write, and waiting for a later one's send an earlier one's read.
//     A later copy's write is still checked against an earlier copy's read
//     that nothing waited for.

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace meshsim {

class VectorClock {
 public:
  explicit VectorClock(int actors = 0) : c_(static_cast<size_t>(actors), 0) {}
  uint32_t operator[](int actor) const { return c_[static_cast<size_t>(actor)]; }
  uint32_t tick(int actor) { return ++c_[static_cast<size_t>(actor)]; }
  void join(const VectorClock& other);

 private:
  std::vector<uint32_t> c_;
};

// One actor's clocks: its code's, and its DMAs' two sides (its thread only).
struct ActorClocks {
  explicit ActorClocks(int actors) : device(actors), reader(actors), writer(actors) {}
  VectorClock device;  // the device's code
  VectorClock reader;  // its DMAs' reads of their sources
  VectorClock writer;  // its DMAs' writes of their destinations
};

// One device's memory: the history of its buffers and the signals pending
// on its semaphores (shared by the functions an mpmd_map runs on it).
struct ShardRaces {
  ShardRaces(int buffers, int semaphores) : history(buffers), signals(semaphores) {}

  struct Access {
    int actor;
    uint32_t epoch;
    bool write;
    size_t begin, end;  // bytes of the buffer
    const char* op;  // "read", "DMA write", ...
  };
  struct Signal {
    uint32_t units;
    VectorClock clock;
  };

  std::mutex mu;  // guards what follows
  std::vector<std::vector<Access>> history;  // by buffer
  std::vector<std::deque<Signal>> signals;   // by semaphore cell
};

class RaceDetector {
 public:
  // `device_ids` by launch position, for messages; `programs` likewise the
  // mpmd_map program of each position, named beside its device when given
  // (functions that share a device), or empty.
  RaceDetector(std::string kernel, std::vector<int> device_ids, std::vector<int> programs = {});

  // How many actors a clock counts: each device and its DMAs' two sides.
  static int actors(int devices) { return 3 * devices; }
  int device_actor(int position) const { return position; }
  int reader_actor(int position) const { return static_cast<int>(device_ids_.size()) + position; }
  int writer_actor(int position) const {
    return 2 * static_cast<int>(device_ids_.size()) + position;
  }

  // Checks and records an access by `actor` (whose clock is `clock`, already
  // ticked) to bytes [begin, end) of buffer `buffer` of the device at
  // `owner` (whose part is `races`). DataRaceError on a conflict, but for
  // one with the access by actor `same.first` at epoch `same.second` (a
  // DMA's write against its own read).
  void access(ShardRaces& races, int owner, int buffer, size_t begin, size_t end, bool write,
              int actor, const VectorClock& clock, const char* op,
              std::pair<int, uint32_t> same = {-1, 0}) const;
  // A signal of `units` on semaphore cell `cell` of `races`, carrying `clock`.
  void signal(ShardRaces& races, int cell, uint32_t units, const VectorClock& clock) const;
  // A wait that took `units` from cell `cell`: joins their clocks into `clock`.
  void take(ShardRaces& races, int cell, uint32_t units, VectorClock& clock) const;

 private:
  // "device 3" or "a DMA started by device 3" (with "(mpmd_map program 1)").
  std::string actor_name(int actor) const;

  std::string kernel_;
  std::vector<int> device_ids_;
  std::vector<int> programs_;
};

}  // namespace meshsim
