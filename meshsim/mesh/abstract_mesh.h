#pragma once
// AbstractMesh: the shape of a device mesh (ordered axis names and sizes)
// without any devices. Plans built for an AbstractMesh (shard shapes, device
// groups) depend only on this, so they can be cached by it and reused on
// every concrete Mesh of the same shape.
//
// Mesh positions are numbered row-major: the last axis varies fastest, as in
// a JAX mesh built from a reshaped device array.

#include <cstddef>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace meshsim {

class AbstractMesh {
 public:
  // Throws MeshError if there are no axes, a name is empty or repeated, a size
  // is < 1, or the total size does not fit in an int.
  explicit AbstractMesh(std::vector<std::pair<std::string, int>> axes);
  // Copied, also where moved from: a moved-from mesh would keep its size
  // with no axes, a state the constructor refuses.
  AbstractMesh(const AbstractMesh&) = default;
  AbstractMesh& operator=(const AbstractMesh&) = default;

  int num_axes() const { return static_cast<int>(names_.size()); }
  // Number of mesh positions: the product of the axis sizes.
  int size() const { return size_; }
  const std::vector<std::string>& axis_names() const { return names_; }
  const std::vector<int>& axis_sizes() const { return sizes_; }

  // Index of the axis in axis_names(), or nullopt.
  std::optional<int> find_axis(std::string_view name) const noexcept;
  // Like find_axis, but throws UnknownAxisError naming the axis and the mesh's axes.
  int axis_position(std::string_view name) const;
  int axis_size(std::string_view name) const;

  // Coordinates of a mesh position, one per axis. InvalidArgumentError unless
  // 0 <= position < size().
  std::vector<int> coords(int position) const;
  // Inverse of coords(). InvalidArgumentError on a wrong count or a coordinate
  // out of its axis' range.
  int position(std::span<const int> coords) const;

  // "AbstractMesh(x=4, y=2)"
  std::string to_string() const;
  // "x=4, y=2": the axes alone, as error messages quote them.
  std::string axes_to_string() const;

  bool operator==(const AbstractMesh&) const = default;
  // Consistent with operator==; for caching plans by mesh shape.
  size_t hash() const;

 private:
  std::vector<std::string> names_;
  std::vector<int> sizes_;
  int size_ = 1;
};

inline std::ostream& operator<<(std::ostream& os, const AbstractMesh& mesh) {
  return os << mesh.to_string();
}

}  // namespace meshsim

template <>
struct std::hash<meshsim::AbstractMesh> {
  size_t operator()(const meshsim::AbstractMesh& mesh) const { return mesh.hash(); }
};
