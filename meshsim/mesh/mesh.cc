#include "meshsim/mesh/mesh.h"

#include <algorithm>
#include <numeric>
#include <ranges>
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

Mesh::Mesh(AbstractMesh shape, std::vector<int> device_ids)
    : shape_(std::move(shape)), device_ids_(std::move(device_ids)) {
  check_size(shape_);
  if (device_ids_.size() != static_cast<size_t>(shape_.size())) {
    throw MeshError("wrong number of device ids for " + shape_.to_string() + ": expected " +
                    std::to_string(shape_.size()) + ", got " + std::to_string(device_ids_.size()));
  }
  position_of_.reserve(device_ids_.size());
  for (int p = 0; p < shape_.size(); ++p) {
    const int id = device_ids_[p];
    if (id < 0) {
      throw MeshError("negative device id " + std::to_string(id) + " at mesh position " +
                      std::to_string(p) + " of " + shape_.to_string());
    }
    auto [it, inserted] = position_of_.emplace(id, p);
    if (!inserted) {
      throw MeshError("device id " + std::to_string(id) + " appears twice, at mesh positions " +
                      std::to_string(it->second) + " and " + std::to_string(p) + " of " +
                      shape_.to_string());
    }
  }
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
  return device_ids_[position];
}

std::optional<int> Mesh::find_position(int device_id) const {
  auto it = position_of_.find(device_id);
  if (it == position_of_.end()) return std::nullopt;
  return it->second;
}

int Mesh::position_of(int device_id) const {
  if (auto p = find_position(device_id)) return *p;
  throw MeshError("device " + std::to_string(device_id) + " is not in " + to_string());
}

std::vector<int> Mesh::coords_of_device(int device_id) const {
  return shape_.coords(position_of(device_id));
}

std::string Mesh::to_string() const {
  std::string out = "Mesh(" + shape_.axes_to_string();
  if (!std::ranges::equal(device_ids_, std::views::iota(0, size()))) {
    out += "; devices=" + format_ints(std::span<const int>(device_ids_));
  }
  return out + ")";
}

}  // namespace meshsim
