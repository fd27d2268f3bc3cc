#pragma once
// GroupLayouts: a runtime's device-group layouts, by mesh shape. Which mesh
// positions form each group of a collective, and each position's rank, depend
// only on the AbstractMesh, the axes and the axis_index_groups, never on the
// concrete devices: the MeshStates of every concrete mesh of one shape share
// one layout (a plan for an AbstractMesh that runs on devices 0-3, then 4-7,
// computes it once). Only the Rendezvous, where concrete devices meet, stay
// per mesh.
//
// Thread-safe. Entries live while some MeshState holds their layout (the
// cache keeps weak references), so it is bounded by the runtime's interned
// meshes.

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/axis_groups.h"

namespace meshsim {

class GroupLayouts {
 public:
  // The layout of the groups over `axes` (with `index_groups`) of `mesh`;
  // AxisError / GroupError as device_groups() for invalid ones (not cached).
  std::shared_ptr<const DeviceGroups> get(const AbstractMesh& mesh,
                                          std::span<const std::string> axes,
                                          const AxisIndexGroups& index_groups);
  // How many layouts get() has computed (for tests).
  uint64_t computed() const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::weak_ptr<const DeviceGroups>> layouts_;
  size_t purge_at_ = 64;  // drop expired entries once the map grows to this
  uint64_t computed_ = 0;
};

}  // namespace meshsim
