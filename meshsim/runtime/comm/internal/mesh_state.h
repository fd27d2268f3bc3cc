#pragma once
// MeshState: the runtime's interned copy of one Mesh — precomputed
// coordinates and the cached Rendezvous of every device group collectives
// have used on it (their layouts are shared by every mesh of the same shape:
// GroupLayouts). Devices look groups up here on a
// miss of their own per-device cache (DeviceState), so the mutex below is off
// the fast path.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/comm/internal/fabric.h"
#include "meshsim/runtime/comm/internal/group_layouts.h"
#include "meshsim/runtime/comm/internal/rendezvous.h"

namespace meshsim {

// The groups of one (axes, axis_index_groups) pair over a mesh.
struct GroupSet {
  std::vector<std::string> axes;
  AxisIndexGroups index_groups;
  std::shared_ptr<const DeviceGroups> layout;  // shared by the meshes of one shape
  bool equal_sizes = true;
  std::vector<std::unique_ptr<Rendezvous>> rendezvous;  // by group number
};

// A device's view of its group: where to meet and under which rank.
struct GroupRef {
  const GroupSet* set = nullptr;
  Rendezvous* rendezvous = nullptr;
  int rank = 0;
  // The runtime's point-to-point links, and the flag psend sets so that a
  // launch that sent no message skips the scan for unreceived ones.
  Fabric* fabric = nullptr;
  std::atomic<bool>* messages_sent = nullptr;
};

class MeshState {
 public:
  // `fabric` and `layouts` are the runtime's: used only while the runtime
  // runs launches (a MeshState's destructor touches neither).
  MeshState(Mesh mesh, Fabric& fabric, GroupLayouts& layouts);

  const Mesh& mesh() const { return mesh_; }
  // Unique in the process and never reused (unlike an address): a device's
  // group cache keys on it, so an entry left by an evicted MeshState can never
  // match a new one.
  uint64_t id() const { return id_; }
  // MeshStates created so far in the process (for tests).
  static uint64_t created_count();
  std::span<const int> coords(int position) const { return coords_[position]; }
  // One past the largest id of the mesh.
  int id_bound() const { return static_cast<int>(is_member_.size()); }

  // The group of mesh position `position` for `axes` / `index_groups`.
  // Validates both (AxisError, GroupError).
  GroupRef group(const AxisNames& axes, const AxisIndexGroups& index_groups, int position);

  // After an aborted launch: every rendezvous and every link among the
  // mesh's devices back to its initial state.
  void reset_after_abort();
  // After a launch that succeeded: describes the psend messages among the
  // mesh's devices nobody received ("" if none) and drops them, so they
  // cannot leak into the next launch.
  std::string take_unreceived_messages();

 private:
  Mesh mesh_;
  uint64_t id_;
  std::vector<std::vector<int>> coords_;
  std::mutex mu_;
  std::deque<GroupSet> sets_;  // a deque: GroupSet addresses stay valid
  Fabric& fabric_;
  GroupLayouts& layouts_;
  std::vector<bool> is_member_;  // by device id: whether the mesh has it
  std::atomic<bool> messages_sent_{false};
};

}  // namespace meshsim
