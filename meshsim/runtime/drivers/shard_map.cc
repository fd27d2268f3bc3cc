#include "meshsim/runtime/drivers/shard_map.h"

#include "meshsim/runtime/drivers/internal/shard_layout.h"

namespace meshsim::detail {

std::vector<std::vector<Array>> run_on_shards(Runtime& runtime, const Mesh& mesh,
                                              const ShardBody& body,
                                              std::span<const PartitionSpec> in_specs,
                                              std::span<const Array> inputs) {
  if (in_specs.size() != inputs.size()) {
    throw InvalidArgumentError("shard_map got " + std::to_string(inputs.size()) +
                               " inputs but " + std::to_string(in_specs.size()) + " in_specs");
  }
  // shards[i][p]: input i on mesh position p.
  std::vector<std::vector<Array>> shards;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ShardLayout layout =
        make_layout(mesh.abstract_mesh(), in_specs[i], inputs[i].shape(), inputs[i].dtype(),
                    argument_name("input", i, in_specs[i]));
    shards.push_back(split(layout, inputs[i]));
  }
  std::vector<std::vector<Array>> outputs(mesh.size());
  runtime.launch(mesh, [&](DeviceContext& ctx) {
    const int p = ctx.position();
    std::vector<Array> local;
    local.reserve(shards.size());
    for (auto& input : shards) local.push_back(input[p]);
    outputs[p] = body(ctx, local);
  });
  return outputs;
}

std::vector<Array> assemble(const Mesh& mesh, std::span<const PartitionSpec> out_specs,
                            std::vector<std::vector<Array>> outputs, bool check_replication) {
  std::vector<Array> results;
  for (size_t i = 0; i < out_specs.size(); ++i) {
    std::vector<Array> per_device(mesh.size());
    for (int p = 0; p < mesh.size(); ++p) per_device[p] = std::move(outputs[p][i]);
    const std::string what = argument_name("output", i, out_specs[i]);
    const ShardLayout layout = make_layout(
        mesh.abstract_mesh(), out_specs[i],
        global_shape_of(mesh.abstract_mesh(), out_specs[i], per_device[0].shape(), what),
        per_device[0].dtype(), what);
    if (check_replication) check_replicas(layout, mesh, per_device, i);
    results.push_back(gather(layout, per_device));
  }
  return results;
}

std::vector<Array> shard_map(Runtime& runtime, const Mesh& mesh, const ShardBody& body,
                             std::span<const PartitionSpec> in_specs,
                             std::span<const PartitionSpec> out_specs,
                             std::span<const Array> inputs, ShardMapOptions options) {
  // Catch a spec naming an unknown or repeated axis before running anything,
  // the inputs' first, as a plan does (an out_spec's rank is checked against
  // the outputs in assemble, once they are known to agree).
  for (size_t i = 0; i < in_specs.size(); ++i) {
    validate_axes(mesh.abstract_mesh(), in_specs[i], argument_name("input", i, in_specs[i]));
  }
  for (size_t i = 0; i < out_specs.size(); ++i) {
    validate_axes(mesh.abstract_mesh(), out_specs[i], argument_name("output", i, out_specs[i]));
  }
  std::vector<std::vector<Array>> outputs = run_on_shards(runtime, mesh, body, in_specs, inputs);
  check_outputs(mesh, out_specs.size(), outputs);
  return assemble(mesh, out_specs, std::move(outputs), options.check_replication);
}

}  // namespace meshsim::detail
