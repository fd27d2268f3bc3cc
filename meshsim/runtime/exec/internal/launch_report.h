#pragma once
// What deadlock and timeout reports say about the devices of a launch, kept
// small at thousands of devices: devices in the same state are summarized
// together ("devices 0–4094 step 2: waiting in psum on axes 'x', group 0 of 1
// after 0 collectives"), and a deadlock of devices that called one collective
// over different groups is named as the mismatch it is. Internal to runtime/.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "meshsim/runtime/comm/internal/rendezvous.h"

namespace meshsim {

// Where one device is, as read (racily) by the reporter.
struct DeviceSnapshot {
  // kNotStarted: its body has not begun (in fiber mode, its worker thread is
  // still busy with another device's code).
  enum class State { kNotStarted, kFinished, kOwnCode, kWaiting };
  int id = 0;     // the device, as users name it
  int core = 0;   // DeviceState::core: an mpmd_map function's index on its device
  int agent = 0;  // DeviceState::agent: what the launch's groups hold
  State state = State::kOwnCode;
  const char* op = nullptr;              // the collective it is in, if any
  const Rendezvous* group = nullptr;     // that collective's group, if any
  uint64_t collectives = 0;              // completed before this state
  bool blocked_in_group_meeting = false;  // asleep on its group's own word
  std::string detail;  // what it waits for, after the op (" for ... to reach 2 (it holds 1)")
};

// "0–7, 9, 12–20 step 4": ids in order, runs with a constant step folded;
// past `max_parts` parts, the rest is counted.
std::string compress_ids(std::span<const int> ids, size_t max_parts = 8);

// One line per state ("\n  devices ...: waiting in ..."), in order of the
// states' first device.
std::string summarize_devices(std::span<const DeviceSnapshot> devices);

struct GroupMismatch {
  int first_device;     // of the first side
  std::string message;  // names, per side, the devices, the op and the group
};
// Two devices blocked in the meeting of the same collective on different
// groups, each of which holds the other device: they called it over
// different axes or axis_index_groups and will never meet.
std::optional<GroupMismatch> find_group_mismatch(std::span<const DeviceSnapshot> devices);

}  // namespace meshsim
