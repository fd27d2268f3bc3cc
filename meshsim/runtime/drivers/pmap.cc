#include "meshsim/runtime/drivers/pmap.h"

#include <numeric>
#include <optional>

#include "meshsim/mesh/internal/dimension.h"
#include "meshsim/runtime/drivers/internal/shard_layout.h"

namespace meshsim {
namespace {

int pmap_axis(int axis, int rank, const std::string& what) {
  if (const std::optional<int> dim = canonical_dimension(axis, rank)) return *dim;
  throw ShapeError("pmap: " + what + " = " + std::to_string(axis) + " is out of range for rank " +
                   std::to_string(rank));
}

PartitionSpec spec_at(int dim, const std::string& axis) {
  std::vector<PartitionSpec::AxisList> entries(dim + 1);
  entries[dim] = {axis};
  return PartitionSpec(std::move(entries));
}

}  // namespace

namespace detail {

std::vector<Array> pmap(Runtime& runtime, const ShardBody& body, const std::string& axis_name,
                        std::span<const Array> inputs, const PmapOptions& options) {
  const size_t num_inputs = inputs.size();
  if (!options.in_axes.empty() && options.in_axes.size() != num_inputs) {
    throw InvalidArgumentError("pmap: in_axes has " + std::to_string(options.in_axes.size()) +
                               " entries for " + std::to_string(num_inputs) + " inputs");
  }
  std::vector<std::optional<int>> in_axes = options.in_axes;
  if (in_axes.empty()) in_axes.assign(num_inputs, 0);

  std::optional<int64_t> size;
  size_t sized_by = 0;  // the input whose mapped dimension set `size`
  std::vector<PartitionSpec> in_specs;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!in_axes[i]) {
      in_specs.emplace_back();
      continue;
    }
    const std::string what = "in_axes[" + std::to_string(i) + "]";
    const int axis = pmap_axis(*in_axes[i], inputs[i].rank(), what);
    in_axes[i] = axis;
    const int64_t extent = inputs[i].shape()[axis];
    if (size && *size != extent) {
      throw ShapeError("pmap: mapped dimensions differ: " + std::to_string(*size) + " vs " +
                       std::to_string(extent) + " for input " + std::to_string(i) + " (" + what +
                       ")");
    }
    if (!size) sized_by = i;
    size = extent;
    in_specs.push_back(spec_at(axis, axis_name));
  }
  if (!size || *size < 1) {
    throw InvalidArgumentError("pmap needs at least one input mapped over a non-empty dimension");
  }
  // Before sizing a device list by it: a zero-size input may map a dimension
  // far larger than the runtime (an explicit list is checked against it below).
  if (options.devices.empty() && *size > runtime.num_devices()) {
    throw ShapeError("pmap: input " + std::to_string(sized_by) + " of shape " +
                     shape_to_string(inputs[sized_by].shape()) + " maps a dimension of size " +
                     std::to_string(*size) + " but the runtime has " +
                     std::to_string(runtime.num_devices()) + " devices");
  }
  std::vector<int> devices = options.devices;
  if (devices.empty()) {
    devices.resize(*size);
    std::iota(devices.begin(), devices.end(), 0);
  }
  if (static_cast<int64_t>(devices.size()) != *size) {
    throw InvalidArgumentError("pmap: mapped dimension has size " + std::to_string(*size) +
                               " but " + std::to_string(devices.size()) + " devices were given");
  }
  const Mesh mesh(AbstractMesh({{axis_name, static_cast<int>(*size)}}), devices);

  auto unmapped_body = [&](DeviceContext& ctx, std::span<const Array> shards) {
    std::vector<Array> unmapped;
    for (size_t i = 0; i < shards.size(); ++i) {
      if (!in_axes[i]) {
        unmapped.push_back(shards[i]);
        continue;
      }
      Shape s = shards[i].shape();
      s.erase(s.begin() + *in_axes[i]);
      unmapped.push_back(shards[i].reshape(s));
    }
    return body(ctx, unmapped);
  };
  auto outputs = detail::run_on_shards(runtime, mesh, unmapped_body, in_specs, inputs);
  // Before stacking: the shapes the bodies returned, not shard_map's.
  detail::check_outputs(mesh, outputs[0].size(), outputs, "pmap",
                        detail::OutputCountFrom::kFirstDevice);

  // Stack each output along out_axes[o]: a new dimension of size 1 per device,
  // sharded over the mapped axis.
  const size_t num_outputs = outputs[0].size();
  if (!options.out_axes.empty() && options.out_axes.size() != num_outputs) {
    throw InvalidArgumentError("pmap: out_axes has " + std::to_string(options.out_axes.size()) +
                               " entries for " + std::to_string(num_outputs) + " outputs");
  }
  std::vector<PartitionSpec> out_specs;
  for (size_t o = 0; o < num_outputs; ++o) {
    const int rank = outputs[0][o].rank() + 1;
    const int out_axis = pmap_axis(options.out_axes.empty() ? 0 : options.out_axes[o], rank,
                                        "out_axes[" + std::to_string(o) + "]");
    for (auto& per_device : outputs) {
      Shape s = per_device[o].shape();
      s.insert(s.begin() + std::min<int>(out_axis, static_cast<int>(s.size())), 1);
      per_device[o] = per_device[o].reshape(s);
    }
    out_specs.push_back(spec_at(out_axis, axis_name));
  }
  return detail::assemble(mesh, out_specs, std::move(outputs), /*check_replication=*/true);
}

}  // namespace detail

}  // namespace meshsim
