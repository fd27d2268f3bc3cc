#pragma once
// Reference index math for sharded-array tests, written without the mesh
// layer's helpers (which devices hold which global element), and seeded
// random partition specs. Shared by shard_map, device_put and plan tests.

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/runtime/array/array.h"

namespace meshsim::testing_support {

using MeshAxes = std::vector<std::pair<std::string, int>>;
using AxisList = PartitionSpec::AxisList;

// Coordinates of a mesh position; the last axis varies fastest.
inline std::vector<int> coords_of(const MeshAxes& axes, int position) {
  std::vector<int> coords(axes.size());
  for (size_t a = axes.size(); a-- > 0;) {
    coords[a] = position % axes[a].second;
    position /= axes[a].second;
  }
  return coords;
}

inline int mesh_size(const MeshAxes& axes) {
  int size = 1;
  for (const auto& axis : axes) size *= axis.second;
  return size;
}

// Into how many blocks a dimension sharded over `entry` is cut.
inline int64_t parts_of(const MeshAxes& axes, const AxisList& entry) {
  int64_t parts = 1;
  for (const std::string& name : entry) {
    for (const auto& [axis, size] : axes) parts *= axis == name ? size : 1;
  }
  return parts;
}

// Which block of a dimension sharded over `entry` a device holds: its
// coordinates along the entry's axes read as one number, first axis major.
inline int64_t block_of(const MeshAxes& axes, const std::vector<int>& coords, const AxisList& entry) {
  int64_t block = 0;
  for (const std::string& name : entry) {
    for (size_t a = 0; a < axes.size(); ++a) {
      if (axes[a].first == name) block = block * axes[a].second + coords[a];
    }
  }
  return block;
}

// blocks[p][d]: the block of dimension d held at mesh position p.
inline std::vector<std::vector<int64_t>> blocks_per_position(const MeshAxes& axes,
                                                      const PartitionSpec& spec, int rank) {
  std::vector<std::vector<int64_t>> blocks(mesh_size(axes));
  for (int p = 0; p < mesh_size(axes); ++p) {
    const std::vector<int> coords = coords_of(axes, p);
    for (int d = 0; d < rank; ++d) {
      blocks[p].push_back(d < spec.size() ? block_of(axes, coords, spec.entries()[d]) : 0);
    }
  }
  return blocks;
}

// Calls f(index) for every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const int64_t count = num_elements(shape);
  Shape index(shape.size());
  for (int64_t flat = 0; flat < count; ++flat) {
    int64_t rest = flat;
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = rest % shape[d];
      rest /= shape[d];
    }
    f(index, flat);
  }
}

inline int64_t flat_of(const Shape& shape, const Shape& index) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// The shard a position holds of iota(shape, int32) (element = flat index).
inline Array expected_iota_shard(const MeshAxes& axes, const PartitionSpec& spec, const Shape& shape,
                                 int position) {
  const int rank = static_cast<int>(shape.size());
  const auto blocks = blocks_per_position(axes, spec, rank);
  Shape local = shape;
  for (int d = 0; d < spec.size(); ++d) local[d] /= parts_of(axes, spec.entries()[d]);
  Array out = Array::empty(local, DType::kInt32);
  for_each_index(local, [&](const Shape& j, int64_t flat) {
    Shape global(rank);
    for (int d = 0; d < rank; ++d) global[d] = blocks[position][d] * local[d] + j[d];
    out.mutable_span<int32_t>()[flat] = static_cast<int32_t>(flat_of(shape, global));
  });
  return out;
}

// ---------------------------------------------------------------------------
// Seeded random specs.

struct SpecCase {
  MeshAxes mesh;
  Shape shape;
  PartitionSpec spec;
  uint32_t seed = 0;
};

// Each dimension is, at random, unsharded, sharded over one unused axis, or
// over several (in a random major-to-minor order); its size is its number of
// blocks times 1..3. Half of the specs drop their trailing unsharded entries.
// A large case stretches dimension 0 to at least kLargeElements elements, so
// that split, gather and the replication check take their parallel path.
inline constexpr int64_t kLargeElements = int64_t{1} << 18;

inline SpecCase random_case(const MeshAxes& mesh, int rank, uint32_t seed, bool large) {
  std::seed_seq seeds{seed, static_cast<uint32_t>(rank), static_cast<uint32_t>(mesh.size()),
                     static_cast<uint32_t>(mesh_size(mesh))};
  std::mt19937 rng(seeds);
  AxisList unused;
  for (const auto& axis : mesh) unused.push_back(axis.first);
  std::shuffle(unused.begin(), unused.end(), rng);
  std::vector<AxisList> entries(rank);
  Shape shape(rank);
  for (int d = 0; d < rank; ++d) {
    const int kind = static_cast<int>(rng() % 3);  // 0 unsharded, 1 one axis, 2 several
    size_t take = std::min<size_t>(kind, unused.size());
    if (kind == 2 && unused.size() > 2) take += rng() % (unused.size() - 1);
    entries[d].assign(unused.begin(), unused.begin() + take);
    unused.erase(unused.begin(), unused.begin() + take);
    shape[d] = parts_of(mesh, entries[d]) * (1 + rng() % 3);
  }
  if (rng() % 2) {
    while (!entries.empty() && entries.back().empty()) entries.pop_back();
  }
  if (large) shape[0] *= (kLargeElements + num_elements(shape) - 1) / num_elements(shape);
  return {mesh, shape, PartitionSpec(entries), seed};
}

inline std::string describe(const SpecCase& c) {
  return "mesh " + AbstractMesh(c.mesh).to_string() + ", shape " + shape_to_string(c.shape) +
         ", spec " + c.spec.to_string() + ", seed " + std::to_string(c.seed);
}

}  // namespace meshsim::testing_support
