#pragma once
// LaunchTime: one launch's virtual time, shared by its devices — the network
// model (or external simulator) and the topology node of each device, and,
// when transfers are priced after the launch, each device's ClockLog and
// their replay. DeviceClock: a device's clock in that launch. Internal to
// the runtime; the public rules are in time/virtual_time.h.
//
// A clock reading (DeviceClock::now, a departure in a link stamp or a
// rendezvous slot, an async handle's end, a trace event's virtual times) is
// seconds when transfers are priced as they happen, and a step of the
// device's ClockLog when they are priced after the launch: only DeviceClock
// and LaunchTime interpret it.

#include <cstdint>
#include <memory>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/time/internal/clock_log.h"
#include "meshsim/runtime/time/virtual_time.h"

namespace meshsim {

class DeferredClocks;

class LaunchTime {
 public:
  // Checks `config` against `mesh`, whose ids are agent ids of a runtime of
  // `devices` devices (DeviceState::agent: core c of device d is
  // d + c * devices): InvalidArgumentError for no network model and no
  // external clock or both, a node list whose length is not the mesh's
  // size, a node the model does not have (naming the position and node),
  // or two cores of one device on different nodes; messages name the mesh
  // `mesh_name`. Device ids below, unless said otherwise, are the mesh's
  // (agent) ids.
  LaunchTime(const VirtualTime& config, const Mesh& mesh, int devices, const std::string& mesh_name);
  ~LaunchTime();

  // Whether transfers are priced after the launch (a model that needs
  // canonical order, an external clock).
  bool deferred() const { return !logs_.empty(); }

  // When `bytes` sent by device `source` to device `destination`, departing
  // at `departure`, arrive. Both devices belong to the launch; not deferred().
  double arrival(int source, int destination, int64_t bytes, double departure) const;
  const DeviceSpec& device() const { return device_; }

  // Alive while the launch holds its devices: a *_start's handle keeps it,
  // so its done() can tell that its launch has let the devices go (another
  // launch may hold them during this one's replay).
  std::weak_ptr<const void> devices_token() const { return devices_token_; }
  void release_devices() { devices_token_.reset(); }

  // deferred(): the log of the device at mesh position `position`, emptied;
  // and the mesh position of device `device`.
  ClockLog& begin_log(int position);
  int position_of(int device) const { return position_of_device_[device]; }

  // deferred(): prices every transfer once the launch's devices finished
  // (throws what the model or simulator throws; see virtual_time.h). The
  // caller runs one replay at a time in the process (ReplayTurn, runtime.cc):
  // launches may share a model or a simulator.
  void replay();
  bool replayed() const { return replayed_ != nullptr; }
  // A reading of the clock of mesh position `position` in seconds (once
  // replayed() when deferred()).
  double seconds(int position, double reading) const;

 private:
  std::shared_ptr<NetworkModel> network_;
  std::shared_ptr<ExternalClock> external_;
  std::vector<int> node_of_device_;      // by device id; -1 outside the launch's mesh
  std::vector<int> position_of_device_;  // by device id; -1 outside the launch's mesh
  std::vector<int> node_of_position_;
  std::vector<int> device_of_position_;
  DeviceSpec device_;
  std::vector<ClockLog> logs_;  // deferred(): by mesh position
  int64_t steps_per_device_ = 0;
  std::unique_ptr<DeferredClocks> replayed_;
  std::shared_ptr<const void> devices_token_ = std::make_shared<int>(0);
};

// Written and read only by the device's own code (its thread or fiber).
struct DeviceClock {
  const LaunchTime* time = nullptr;  // null: the launch keeps no virtual time
  ClockLog* log = nullptr;           // set: transfers are priced after the launch
  double now = 0;                    // a reading (above)

  int concurrent = 0;              // open Communicator::concurrent scopes
  double concurrent_departure = 0;  // the reading when the outermost opened

  bool on() const { return time != nullptr; }
  void begin_launch(LaunchTime* launch_time, int position) {
    time = launch_time;
    log = launch_time != nullptr && launch_time->deferred() ? &launch_time->begin_log(position)
                                                            : nullptr;
    now = 0;
    concurrent = 0;
  }
  // The reading a transfer begun now departs at.
  double departure() const { return concurrent > 0 ? concurrent_departure : now; }
  // Receives `bytes` from device `source` (to device `destination`, this
  // one) that departed at reading `departure` of the sender's clock.
  void receive(int source, int destination, int64_t bytes, double departure) {
    if (log != nullptr) {
      now = log->receive(reading(), time->position_of(source), static_cast<int32_t>(departure),
                         bytes);
    } else {
      join(time->arrival(source, destination, bytes, departure));
    }
  }
  // Receives what another core of this device (agent `source`) sent at
  // reading `departure` of its clock, landing `seconds` later (a copy within
  // the device's memory; no network): the clock moves there if that is
  // later. InvalidArgumentError naming `device` as advance().
  void receive_local(int device, int source, double departure, double seconds);
  // Moves the clock to `other` (a reading of this clock) if it is later.
  void join(double other) {
    if (log != nullptr) {
      if (other != now) now = log->join(reading(), static_cast<int32_t>(other));
    } else if (other > now) {
      now = other;
    }
  }
  // Moves the clock to `seconds` (finite, >= 0) after reading `reading` of
  // this clock, if that is later (work begun at `reading` that ran on its
  // own: a local DMA). InvalidArgumentError naming `device` as advance().
  void join_after(int device, double reading, double seconds);
  // Moves the clock by `seconds` (finite, >= 0) of the device's own work;
  // InvalidArgumentError naming `device` if the clock would not be finite
  // (priced after the launch: when it is replayed).
  void advance(int device, double seconds);

 private:
  int32_t reading() const { return static_cast<int32_t>(now); }
};

}  // namespace meshsim
