#pragma once
// Fabric: the runtime's point-to-point links, one per (source agent,
// destination agent, lane), created on first use. An agent is a device or,
// for mpmd_map's functions that share a device, one of its further cores:
// core c of device d is agent d + c * devices (DeviceState::agent). psend / precv use the
// kMessages lane and algorithms the kCollective lane, so a message a device
// has not received yet never stands in front of an algorithm's transfer.
//
// Memory grows with the links used, not with devices squared: links hang off
// a radix tree keyed by (source * max_devices + destination) * 2 + lane
// (max_devices: the agents, devices * cores),
// kBits bits a level, so a link costs itself plus at most one node a level (a
// ring over 4096 devices: about 3 nodes a link). Lookups take no lock: a
// missing node or link is built and installed with a compare-and-swap
// (acq_rel, so the winner's construction is visible to every later acquire
// load); a thread that loses the race deletes its copy.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "meshsim/runtime/comm/internal/link.h"

namespace meshsim {

// "device 3", or "device 3 core 1" for a further core of an mpmd_map: how
// messages name an agent.
std::string agent_name(int device, int core);

class Fabric {
 public:
  enum class Lane { kCollective = 0, kMessages = 1 };

  // For `devices` devices of up to `cores` cores each.
  explicit Fabric(int devices, int cores = 1);
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  // The agents: devices * cores.
  int max_devices() const { return max_devices_; }
  int devices() const { return devices_; }
  // "device 3", or "device 3 core 1" for a further core: agent `agent` as
  // messages name it.
  std::string name(int agent) const;
  // The link from agent `source` to agent `destination`, both in
  // [0, max_devices()) (the callers check).
  Link& link(int source, int destination, Lane lane);

  // Link::reset on every link with an end in `involved` (agent id ->
  // bool). Only when no thread can use those links.
  void reset(const std::function<bool(int)>& involved);
  // Describes every message sent and never received on a link with both ends
  // in `involved` ("2 from device 1 to device 3"), and drops them. Only when
  // no thread can use those links.
  std::string take_unreceived(const std::function<bool(int)>& involved);

  // Links created so far, and the heap bytes of the tree plus those links
  // (for tests and memory reports).
  size_t link_count() const { return links_.load(std::memory_order_relaxed); }
  size_t allocated_bytes() const;

 private:
  static constexpr int kBits = 4;
  static constexpr int kFanout = 1 << kBits;
  // A child is a Node* on every level but the last, where it is a Link*.
  struct Node {
    std::array<std::atomic<void*>, kFanout> child{};
  };
  // Calls visit(source, destination, lane, Link&) on every link created.
  template <class Visit>
  void for_each_link(Visit visit);
  void destroy(Node* node, int level);

  int devices_;
  int max_devices_;
  int levels_;  // radix digits of the largest key, at least 1
  Node root_;
  std::atomic<size_t> nodes_{0};  // heap nodes (not counting root_)
  std::atomic<size_t> links_{0};
};

}  // namespace meshsim
