#include "meshsim/runtime/time/internal/launch_time.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/time/internal/deferred_clocks.h"
#include "meshsim/runtime/time/internal/transfer_check.h"

namespace meshsim {

namespace {

int past_largest_id(const Mesh& mesh) {
  const std::vector<int>& ids = mesh.device_ids();
  return ids.empty() ? 0 : *std::max_element(ids.begin(), ids.end()) + 1;
}

}  // namespace

LaunchTime::LaunchTime(const VirtualTime& config, const Mesh& mesh, int devices,
                       const std::string& mesh_name)
    : network_(config.network),
      external_(config.external),
      node_of_device_(past_largest_id(mesh), -1),
      position_of_device_(past_largest_id(mesh), -1),
      device_(config.device) {
  const std::string where = "virtual time of the launch on " + mesh_name;
  if (network_ == nullptr && external_ == nullptr) {
    throw InvalidArgumentError(where + ": no network model and no external clock");
  }
  if (network_ != nullptr && external_ != nullptr) {
    throw InvalidArgumentError(where +
                               ": both a network model and an external clock; set one of them");
  }
  const int size = mesh.size();
  if (!config.nodes.empty() && static_cast<int>(config.nodes.size()) != size) {
    throw InvalidArgumentError(where + ": " + std::to_string(config.nodes.size()) +
                               " topology nodes for " + std::to_string(size) + " mesh positions");
  }
  int next_node = 0;  // by default, the devices in order of their first position
  for (int position = 0; position < size; ++position) {
    const int id = mesh.device_ids()[position];
    int node = 0;
    if (!config.nodes.empty()) {
      node = config.nodes[position];
    } else if (id < devices) {
      node = next_node++;
    } else if (node_of_device_[id % devices] >= 0) {
      // A device's further core sits where its core 0 does (whose program,
      // and so position, comes first; checked below).
      node = node_of_device_[id % devices];
    }
    if (network_ != nullptr) {
      try {
        network_->check(Transfer{node, node, 0, 0.0});
      } catch (const Error& e) {
        throw InvalidArgumentError(where + ": mesh position " + std::to_string(position) +
                                   " is placed on node " + std::to_string(node) + ": " + e.what());
      }
    } else if (node < 0) {
      throw InvalidArgumentError(where + ": mesh position " + std::to_string(position) +
                                 " is placed on node " + std::to_string(node) +
                                 ", which is negative");
    }
    node_of_device_[id] = node;
    position_of_device_[id] = position;
    node_of_position_.push_back(node);
    device_of_position_.push_back(id % devices);
  }
  // The cores of one device (agents id + c * devices) share its memory and
  // its place in the network.
  for (int position = 0; position < size; ++position) {
    const int id = mesh.device_ids()[position];
    if (id < devices) continue;
    const int core0 = id % devices;
    if (core0 >= static_cast<int>(node_of_device_.size()) || position_of_device_[core0] < 0) {
      throw InvalidArgumentError(where + ": mesh position " + std::to_string(position) +
                                 " is a core of device " + std::to_string(core0) +
                                 ", whose first core is not in the launch");
    }
    if (node_of_device_[core0] != node_of_position_[position]) {
      throw InvalidArgumentError(
          where + ": mesh positions " + std::to_string(position_of_device_[core0]) + " and " +
          std::to_string(position) + " run on device " + std::to_string(core0) +
          " but are placed on nodes " + std::to_string(node_of_device_[core0]) + " and " +
          std::to_string(node_of_position_[position]) + "; a device's functions share one node");
    }
  }
  if (external_ != nullptr || network_->needs_canonical_order()) {
    // A device's first step is its start: a share of one would allow no move.
    if (config.replay_steps < 2 * static_cast<int64_t>(size)) {
      throw InvalidArgumentError(where + ": VirtualTime::replay_steps (" +
                                 std::to_string(config.replay_steps) +
                                 ") must give each of the " + std::to_string(size) +
                                 " devices at least two steps (its start and one move)");
    }
    logs_.resize(size);
    steps_per_device_ = std::min<int64_t>(config.replay_steps / size, INT32_MAX);
  }
}

LaunchTime::~LaunchTime() = default;

double LaunchTime::arrival(int source, int destination, int64_t bytes, double departure) const {
  const Transfer transfer{node_of_device_[source], node_of_device_[destination], bytes, departure};
  return checked_arrival(network_->arrival(transfer), transfer, "the network model");
}

ClockLog& LaunchTime::begin_log(int position) {
  ClockLog& log = logs_[position];
  log.begin(device_of_position_[position], steps_per_device_);
  return log;
}

void LaunchTime::replay() {
  auto clocks = std::make_unique<DeferredClocks>(logs_, node_of_position_, device_of_position_);
  if (external_ != nullptr) {
    clocks->price(*external_);
  } else {
    clocks->price(*network_);
  }
  replayed_ = std::move(clocks);
}

double LaunchTime::seconds(int position, double reading) const {
  return deferred() ? replayed_->seconds(position, reading) : reading;
}

void DeviceClock::join_after(int device, double reading, double seconds) {
  if (seconds == 0) {
    join(reading);
    return;
  }
  if (log != nullptr) {
    join(log->advance(static_cast<int32_t>(reading), seconds));
    return;
  }
  const double later = reading + seconds;
  if (!std::isfinite(later)) throw_non_finite_clock(device, reading, seconds);
  join(later);
}

void DeviceClock::receive_local(int device, int source, double departure, double seconds) {
  if (log != nullptr) {
    now = log->local(reading(), time->position_of(source), static_cast<int32_t>(departure), seconds);
    return;
  }
  const double later = departure + seconds;
  if (!std::isfinite(later)) throw_non_finite_clock(device, departure, seconds);
  join(later);
}

void DeviceClock::advance(int device, double seconds) {
  if (log != nullptr) {
    if (seconds > 0) now = log->advance(reading(), seconds);
    return;
  }
  const double later = now + seconds;
  if (!std::isfinite(later)) throw_non_finite_clock(device, now, seconds);
  now = later;
}

}  // namespace meshsim
