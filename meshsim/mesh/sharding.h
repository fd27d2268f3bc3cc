#pragma once
// Shard shapes and the part of a global array each mesh position holds.
//
// Dimension d sharded over axes A (major-to-minor) is cut into
// axis_size(A) equal blocks; the position with axis_index(A) = i holds block
// i. Unsharded dimensions are held whole. Positions that differ only on axes
// the spec does not mention hold the same box (replicas).

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"

namespace meshsim {

// The range [start, start + size) of one dimension.
struct DimSlice {
  int64_t start = 0;
  int64_t size = 0;
  bool operator==(const DimSlice&) const = default;
};

inline std::ostream& operator<<(std::ostream& os, const DimSlice& s) {
  return os << "[" << s.start << ", " << s.start + s.size << ")";
}

// The per-position shape. Throws as PartitionSpec::validate; ShapeError if a
// dimension is negative, IndivisibleShardError if one is not divisible by the
// product of its axes' sizes.
std::vector<int64_t> shard_shape(const AbstractMesh& mesh, const PartitionSpec& spec,
                                 std::span<const int64_t> global_shape);

// The box of the global array held at a mesh position, one DimSlice per
// dimension. Throws as shard_shape(), and InvalidArgumentError for a position
// out of range.
std::vector<DimSlice> shard_slice(const AbstractMesh& mesh, const PartitionSpec& spec,
                                  std::span<const int64_t> global_shape, int position);

// A spec bound to a concrete mesh, as jax.sharding.NamedSharding: it says
// which device holds which box.
class NamedSharding {
 public:
  // UnknownAxisError / DuplicateAxisError if the spec names an axis the mesh
  // lacks or names one twice.
  // The rank is checked when a shape is given.
  NamedSharding(Mesh mesh, PartitionSpec spec);

  const Mesh& mesh() const { return mesh_; }
  const PartitionSpec& spec() const { return spec_; }

  std::vector<int64_t> shard_shape(std::span<const int64_t> global_shape) const;
  // The box held by a device; MeshError if the device is not in the mesh.
  std::vector<DimSlice> device_slice(std::span<const int64_t> global_shape, int device_id) const;
  // Mesh axes the spec does not mention, in mesh order: the data is
  // replicated over them.
  std::vector<std::string> replicated_axes() const;

  // "NamedSharding(mesh=Mesh(x=2, y=4), spec=PartitionSpec('x'))"
  std::string to_string() const;

  // Same mesh (shape and device ids) and the same normalized spec, i.e. the
  // same boxes on the same devices: P{"x"} and P{"x", nullptr} compare equal.
  bool operator==(const NamedSharding& other) const {
    return mesh_ == other.mesh_ && spec_.normalized() == other.spec_.normalized();
  }

 private:
  Mesh mesh_;
  PartitionSpec spec_;
};

inline std::ostream& operator<<(std::ostream& os, const NamedSharding& sharding) {
  return os << sharding.to_string();
}

}  // namespace meshsim
