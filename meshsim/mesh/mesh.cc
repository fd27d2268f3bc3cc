#include "meshsim/mesh/mesh.h"

#include <numeric>
#include <span>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace {

// MeshError naming the shape if it has more than Mesh::kMaxDevices devices.
void check_size(const AbstractMesh& shape) {
  if (shape.size() > Mesh::kMaxDevices) {
    throw MeshError(shape.to_string() + " has " + std::to_string(shape.size()) +
                    " devices; a concrete mesh has at most " + std::to_string(Mesh::kMaxDevices));
  }
}

std::vector<int> iota_ids(const AbstractMesh& shape) {
  check_size(shape);
  std::vector<int> ids(shape.size());
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

}  // namespace

Mesh::Mesh(AbstractMesh shape) : Mesh(shape, iota_ids(shape)) {}

Mesh::Mesh(AbstractMesh shape, std::vector<int> device_ids) {
  check_size(shape);
  if (device_ids.size() != static_cast<size_t>(shape.size())) {
    throw MeshError("wrong number of device ids for " + shape.to_string() + ": expected " +
                    std::to_string(shape.size()) + ", got " + std::to_string(device_ids.size()));
  }
  std::unordered_map<int, int> position_of;
  position_of.reserve(device_ids.size());
  for (int p = 0; p < shape.size(); ++p) {
    const int id = device_ids[p];
    if (id < 0) {
      throw MeshError("negative device id " + std::to_string(id) + " at mesh position " +
                      std::to_string(p) + " of " + shape.to_string());
    }
    auto [it, inserted] = position_of.emplace(id, p);
    if (!inserted) {
      throw MeshError("device id " + std::to_string(id) + " appears twice, at mesh positions " +
                      std::to_string(it->second) + " and " + std::to_string(p) + " of " +
                      shape.to_string());
    }
  }
  data_ = std::make_shared<const Data>(
      Data{std::move(shape), std::move(device_ids), std::move(position_of)});
}

Mesh Mesh::make(std::vector<std::pair<std::string, int>> axes) {
  return Mesh(AbstractMesh(std::move(axes)));
}

int Mesh::device_at(int position) const {
  if (position < 0 || position >= size()) {
    throw InvalidArgumentError("mesh position " + std::to_string(position) +
                               " is out of range [0, " + std::to_string(size()) + ") of " +
                               to_string());
  }
  return data_->device_ids[position];
}

std::optional<int> Mesh::find_position(int device_id) const {
  auto it = data_->position_of.find(device_id);
  if (it == data_->position_of.end()) return std::nullopt;
  return it->second;
}

int Mesh::position_of(int device_id) const {
  if (auto p = find_position(device_id)) return *p;
  throw MeshError("device " + std::to_string(device_id) + " is not in " + to_string());
}

std::vector<int> Mesh::coords_of_device(int device_id) const {
  return data_->shape.coords(position_of(device_id));
}

std::string Mesh::to_string() const {
  std::string out = "Mesh(" + data_->shape.axes_to_string();
  // Devices 0..n-1 in order go unsaid. (A loop, not ranges::equal with
  // views::iota, which clang 14 cannot compile against libstdc++ 12.)
  const std::vector<int>& ids = data_->device_ids;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] != static_cast<int>(i)) {
      out += "; devices=" + format_ints(std::span<const int>(ids));
      break;
    }
  }
  return out + ")";
}

}  // namespace meshsim
