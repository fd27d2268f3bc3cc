#include "meshsim/mesh/abstract_mesh.h"

#include <climits>
#include <cstdint>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {

AbstractMesh::AbstractMesh(std::vector<std::pair<std::string, int>> axes) {
  if (axes.empty()) throw MeshError("a mesh needs at least one axis; got none");
  int64_t total = 1;
  for (auto& [name, size] : axes) {
    if (name.empty()) {
      throw MeshError("mesh axis " + std::to_string(names_.size()) + " has an empty name");
    }
    if (find_axis(name)) throw MeshError("mesh axis " + quote_axis(name) + " is given twice");
    if (size < 1) {
      throw MeshError("mesh axis " + quote_axis(name) + " has size " + std::to_string(size) +
                      "; sizes must be >= 1");
    }
    total *= size;
    if (total > INT_MAX) {
      throw MeshError("mesh is too large: more than INT_MAX positions at axis " + quote_axis(name));
    }
    names_.push_back(std::move(name));
    sizes_.push_back(size);
  }
  size_ = static_cast<int>(total);
}

std::optional<int> AbstractMesh::find_axis(std::string_view name) const noexcept {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

int AbstractMesh::axis_position(std::string_view name) const {
  if (auto axis = find_axis(name)) return *axis;
  throw UnknownAxisError("unknown axis " + quote_axis(name) + "; mesh axes are (" + axes_to_string() +
                  ")");
}

int AbstractMesh::axis_size(std::string_view name) const { return sizes_[axis_position(name)]; }

std::vector<int> AbstractMesh::coords(int position) const {
  if (position < 0 || position >= size_) {
    throw InvalidArgumentError("mesh position " + std::to_string(position) +
                               " is out of range [0, " + std::to_string(size_) + ") of " +
                               to_string());
  }
  std::vector<int> out(sizes_.size());
  for (size_t a = sizes_.size(); a-- > 0;) {
    out[a] = position % sizes_[a];
    position /= sizes_[a];
  }
  return out;
}

int AbstractMesh::position(std::span<const int> coords) const {
  if (coords.size() != sizes_.size()) {
    throw InvalidArgumentError("coordinates " + format_ints(coords, "(", ")") + " have " +
                               count_of(static_cast<int64_t>(coords.size()), "entry", "entries") +
                               " but " + to_string() + " has " + std::to_string(sizes_.size()) +
                               " axes");
  }
  int out = 0;
  for (size_t a = 0; a < sizes_.size(); ++a) {
    if (coords[a] < 0 || coords[a] >= sizes_[a]) {
      throw InvalidArgumentError("coordinate " + std::to_string(coords[a]) + " on axis " +
                                 quote_axis(names_[a]) + " is out of range [0, " +
                                 std::to_string(sizes_[a]) + ") of " + to_string());
    }
    out = out * sizes_[a] + coords[a];
  }
  return out;
}

std::string AbstractMesh::axes_to_string() const {
  std::string out;
  for (size_t a = 0; a < names_.size(); ++a) {
    if (a > 0) out += ", ";
    out += names_[a] + "=" + std::to_string(sizes_[a]);
  }
  return out;
}

std::string AbstractMesh::to_string() const { return "AbstractMesh(" + axes_to_string() + ")"; }

size_t AbstractMesh::hash() const {
  size_t h = 0;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (size_t a = 0; a < names_.size(); ++a) {
    mix(std::hash<std::string>{}(names_[a]));
    mix(std::hash<int>{}(sizes_[a]));
  }
  return h;
}

}  // namespace meshsim
