#pragma once
// LaunchTime: one launch's virtual time, shared by its devices — the network
// model and the topology node of each device. DeviceClock: a device's clock
// in that launch. Internal to the runtime; the public rules are in
// time/virtual_time.h.

#include <cstdint>
#include <memory>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/time/virtual_time.h"

namespace meshsim {

// Owned by a shared_ptr for the launch's duration: a *_start's handle keeps
// a weak_ptr, so its done() can tell that the launch has ended.
class LaunchTime : public std::enable_shared_from_this<LaunchTime> {
 public:
  // Checks `config` against `mesh` (whose device ids are below
  // `device_limit`): InvalidArgumentError for a missing network model, one
  // that needs canonical order, a node list whose length is not the mesh's
  // size, or a node the model does not have (naming the position and node).
  LaunchTime(const VirtualTime& config, const Mesh& mesh, int device_limit);

  // When `bytes` sent by device `source` to device `destination`, departing
  // at `departure`, arrive. Both devices belong to the launch.
  double arrival(int source, int destination, int64_t bytes, double departure) const;
  const DeviceSpec& device() const { return device_; }

 private:
  std::shared_ptr<NetworkModel> network_;
  std::vector<int> node_of_device_;  // by device id; -1 outside the launch's mesh
  DeviceSpec device_;
};

// Written and read only by the device's own code (its thread or fiber).
struct DeviceClock {
  const LaunchTime* time = nullptr;  // null: the launch keeps no virtual time
  double now = 0;

  bool on() const { return time != nullptr; }
  void begin_launch(const LaunchTime* launch_time) {
    time = launch_time;
    now = 0;
  }
  // Data this device waits for arrives at `arrival`.
  void receive(double arrival) {
    if (arrival > now) now = arrival;
  }
  // Prices `bytes` from device `source` to device `destination` departing at
  // `departure`, and receives them.
  void receive(int source, int destination, int64_t bytes, double departure) {
    receive(time->arrival(source, destination, bytes, departure));
  }
};

}  // namespace meshsim
