#pragma once
// Mesh: an AbstractMesh plus the runtime device id placed at each mesh
// position. Two meshes of the same shape on different devices (e.g. devices
// 0-3 and 4-7) share every shape-only plan; only the id lookup differs.
// Immutable: copies share one table of the devices (a copy costs a reference
// count, whatever the mesh's size).

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"

namespace meshsim {

class Mesh {
 public:
  // The most devices a concrete mesh may have (an AbstractMesh has no such
  // limit): a mesh holds a table of its devices, and no runtime runs more.
  static constexpr int kMaxDevices = 1 << 22;

  // Device ids 0..size-1 in row-major position order.
  explicit Mesh(AbstractMesh shape);
  // device_ids[p] is the device at mesh position p. Throws MeshError on a
  // wrong count, a negative id, a repeated id or more than kMaxDevices.
  Mesh(AbstractMesh shape, std::vector<int> device_ids);
  // Copied, also where moved from (a moved-from mesh would have no devices
  // for its positions): either costs a reference count.
  Mesh(const Mesh&) = default;
  Mesh& operator=(const Mesh&) = default;
  // Mesh(AbstractMesh(axes)).
  static Mesh make(std::vector<std::pair<std::string, int>> axes);

  const AbstractMesh& abstract_mesh() const { return data_->shape; }
  const std::vector<int>& device_ids() const { return data_->device_ids; }
  int size() const { return data_->shape.size(); }

  // InvalidArgumentError unless 0 <= position < size().
  int device_at(int position) const;
  // The mesh position of a device, or nullopt if the device is not in the mesh.
  std::optional<int> find_position(int device_id) const;
  // Like find_position, but throws MeshError naming the device and the mesh.
  int position_of(int device_id) const;
  std::vector<int> coords_of_device(int device_id) const;

  // "Mesh(x=2, y=2)" for the default ids, else "Mesh(x=2, y=2; devices=[4, 5, 6, 7])".
  std::string to_string() const;

  bool operator==(const Mesh& other) const {
    return data_ == other.data_ ||
           (data_->shape == other.data_->shape && data_->device_ids == other.data_->device_ids);
  }

 private:
  struct Data {
    AbstractMesh shape;
    std::vector<int> device_ids;
    std::unordered_map<int, int> position_of;  // device id -> mesh position
  };
  std::shared_ptr<const Data> data_;  // never null
};

inline std::ostream& operator<<(std::ostream& os, const Mesh& mesh) {
  return os << mesh.to_string();
}

}  // namespace meshsim
