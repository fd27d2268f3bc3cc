#include "meshsim/runtime/kernel/device_id.h"

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

DeviceId DeviceId::mesh(std::vector<int> coords) {
  DeviceId id;
  id.coords_ = std::move(coords);
  id.by_coords_ = true;
  return id;
}

int DeviceId::position_in(const Mesh& mesh) const {
  if (!by_coords_) {
    if (logical_ < 0 || logical_ >= mesh.size()) {
      // By its shape: a logical id is a position, whatever devices hold them
      // (an mpmd_map launch's mesh holds internal ids for a device's cores).
      throw DeviceIdError(to_string() + " is outside Mesh(" + mesh.abstract_mesh().axes_to_string() +
                          ") (logical ids are [0, " +
                          std::to_string(mesh.size()) + "))");
    }
    return logical_;
  }
  const std::vector<int>& sizes = mesh.abstract_mesh().axis_sizes();
  if (coords_.size() != sizes.size()) {
    throw DeviceIdError(to_string() + " has " + std::to_string(coords_.size()) +
                        " coordinates but " + mesh.to_string() + " has " +
                        std::to_string(sizes.size()) + " axes");
  }
  int position = 0;
  for (size_t axis = 0; axis < sizes.size(); ++axis) {
    if (coords_[axis] < 0 || coords_[axis] >= sizes[axis]) {
      throw DeviceIdError(to_string() + " is outside " + mesh.to_string() + ": axis '" +
                          mesh.abstract_mesh().axis_names()[axis] + "' has size " +
                          std::to_string(sizes[axis]));
    }
    position = position * sizes[axis] + coords_[axis];
  }
  return position;
}

std::string DeviceId::to_string() const {
  if (!by_coords_) return "logical id " + std::to_string(logical_);
  std::string out = "mesh coordinates (";
  for (size_t i = 0; i < coords_.size(); ++i) out += (i ? ", " : "") + std::to_string(coords_[i]);
  return out + ")";
}

}  // namespace meshsim
