#include "meshsim/mesh/sharding.h"

#include <algorithm>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {

std::vector<int64_t> shard_shape(const AbstractMesh& mesh, const PartitionSpec& spec,
                                 std::span<const int64_t> global_shape) {
  const int rank = static_cast<int>(global_shape.size());
  spec.validate(mesh, rank);
  std::vector<int64_t> out(global_shape.begin(), global_shape.end());
  auto what = [&](int d, const std::string& defect) {
    return "cannot shard shape " + format_ints(global_shape, "(", ")") + " by " +
           spec.to_string() + " on " + mesh.to_string() + ": dimension " + std::to_string(d) +
           " " + defect;
  };
  for (int d = 0; d < rank; ++d) {
    if (out[d] < 0) throw ShapeError(what(d, "has negative size " + std::to_string(out[d])));
    const PartitionSpec::AxisList& axes = spec.dim(d);
    if (axes.empty()) continue;
    const int parts = axis_size(mesh, axes);
    if (out[d] % parts != 0) {
      throw IndivisibleShardError(
          what(d, "of size " + std::to_string(out[d]) + " is not divisible by " +
                      std::to_string(parts) + ", the product of the sizes of axes " +
                      format_axes(axes)));
    }
    out[d] /= parts;
  }
  return out;
}

std::vector<DimSlice> shard_slice(const AbstractMesh& mesh, const PartitionSpec& spec,
                                  std::span<const int64_t> global_shape, int position) {
  const std::vector<int64_t> shard = shard_shape(mesh, spec, global_shape);
  mesh.coords(position);  // range check, before any axis_index
  std::vector<DimSlice> out(shard.size());
  for (size_t d = 0; d < shard.size(); ++d) {
    const PartitionSpec::AxisList& axes = spec.dim(static_cast<int>(d));
    const int64_t index = axes.empty() ? 0 : axis_index(mesh, axes, position);
    out[d] = DimSlice{index * shard[d], shard[d]};
  }
  return out;
}

NamedSharding::NamedSharding(Mesh mesh, PartitionSpec spec)
    : mesh_(std::move(mesh)), spec_(std::move(spec)) {
  spec_.validate(mesh_.abstract_mesh(), spec_.size());
}

std::vector<int64_t> NamedSharding::shard_shape(std::span<const int64_t> global_shape) const {
  return meshsim::shard_shape(mesh_.abstract_mesh(), spec_, global_shape);
}

std::vector<DimSlice> NamedSharding::device_slice(std::span<const int64_t> global_shape,
                                                  int device_id) const {
  return shard_slice(mesh_.abstract_mesh(), spec_, global_shape, mesh_.position_of(device_id));
}

std::vector<std::string> NamedSharding::replicated_axes() const {
  const PartitionSpec::AxisList used = spec_.mentioned_axes();
  std::vector<std::string> out;
  for (const std::string& axis : mesh_.abstract_mesh().axis_names()) {
    if (std::find(used.begin(), used.end(), axis) == used.end()) out.push_back(axis);
  }
  return out;
}

std::string NamedSharding::to_string() const {
  return "NamedSharding(mesh=" + mesh_.to_string() + ", spec=" + spec_.to_string() + ")";
}

}  // namespace meshsim
