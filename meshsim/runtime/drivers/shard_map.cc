#include "meshsim/runtime/drivers/shard_map.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/sharding.h"
#include "meshsim/runtime/array/internal/box_copy.h"

namespace meshsim {
namespace {

std::string input_name(const char* what, size_t index, const PartitionSpec& spec) {
  return std::string("shard_map ") + what + " " + std::to_string(index) + " (spec " +
         spec.to_string() + ")";
}

// Rethrows a mesh-layer error, keeping its type, with the shard_map argument
// it concerns.
template <class F>
auto with_context(const std::string& context, F&& f) {
  try {
    return f();
  } catch (InvalidArgumentError& e) {
    e.add_context(context);
    throw;
  }
}

// Below this many bytes, split / gather / compare inline: oneTBB tasks cost
// microseconds, and small shard_maps (unit tests) are latency-bound.
constexpr int64_t kParallelBytes = 256 * 1024;

// Runs every piece of every copy, spread over oneTBB workers when big enough.
// Nothing to copy (a zero-size array, whose bytes() are null) copies nothing.
template <class SrcOf, class DstOf>
void run_copies(const std::vector<BoxCopy>& copies, SrcOf src_of, DstOf dst_of) {
  int64_t bytes = 0;
  for (const BoxCopy& c : copies) bytes += c.bytes();
  if (bytes == 0) return;
  if (bytes < kParallelBytes) {
    for (size_t i = 0; i < copies.size(); ++i) copies[i].copy_all(src_of(i), dst_of(i));
    return;
  }
  tbb::parallel_for(size_t{0}, copies.size(), [&](size_t i) {
    const std::byte* src = src_of(i);
    std::byte* dst = dst_of(i);
    tbb::parallel_for(int64_t{0}, copies[i].num_pieces(),
                      [&](int64_t piece) { copies[i].copy_piece(src, dst, piece); });
  });
}

bool shards_anything(const PartitionSpec& spec) { return !spec.mentioned_axes().empty(); }

std::vector<int64_t> origin_of(const std::vector<DimSlice>& box) {
  std::vector<int64_t> origin;
  for (const auto& s : box) origin.push_back(s.start);
  return origin;
}

// Splits `global` into one shard per mesh position.
std::vector<Array> split(const AbstractMesh& shape, const PartitionSpec& spec, const Array& global,
                         const std::vector<int64_t>& local_shape) {
  const int n = shape.size();
  if (!shards_anything(spec)) return std::vector<Array>(n, global);
  std::vector<Array> shards(n);
  std::vector<BoxCopy> copies;
  copies.reserve(n);
  const std::vector<int64_t> zeros(local_shape.size(), 0);
  for (int p = 0; p < n; ++p) {
    shards[p] = Array::empty(local_shape, global.dtype());
    const auto box = shard_slice(shape, spec, global.shape(), p);
    copies.emplace_back(dtype_size(global.dtype()), local_shape, global.shape(), origin_of(box),
                        local_shape, zeros);
  }
  run_copies(copies, [&](size_t) { return global.bytes(); },
             [&](size_t p) { return shards[p].mutable_bytes(); });
  return shards;
}

// The mesh axes along which positions p and q differ ("axis y", "axes x, y"):
// axes the spec leaves out, since p and q hold the same box.
std::string differing_axes(const AbstractMesh& shape, int p, int q) {
  const std::vector<int> a = shape.coords(p);
  const std::vector<int> b = shape.coords(q);
  std::vector<std::string> names;
  for (size_t axis = 0; axis < a.size(); ++axis) {
    if (a[axis] != b[axis]) names.push_back(shape.axis_names()[axis]);
  }
  std::string out = names.size() == 1 ? "axis " : "axes ";
  for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : ", ") + names[i];
  return out;
}

// The first position holding each distinct box is the source; the others are
// replicas that must hold the same bits.
void check_replicas(const Mesh& mesh, const PartitionSpec& spec, size_t index,
                    const std::vector<int64_t>& global_shape, const std::vector<Array>& outs) {
  const AbstractMesh& shape = mesh.abstract_mesh();
  const int n = mesh.size();
  std::vector<int> source(n);
  std::vector<std::vector<DimSlice>> boxes(n);
  for (int p = 0; p < n; ++p) {
    boxes[p] = shard_slice(shape, spec, global_shape, p);
    source[p] = p;
    for (int q = 0; q < p; ++q) {
      if (boxes[q] == boxes[p]) {
        source[p] = q;
        break;
      }
    }
  }
  std::vector<char> differs(n, 0);
  const auto compare = [&](int p) {
    const Array& a = outs[source[p]];
    // memcmp must not see the null bytes() of a zero-size array.
    differs[p] = source[p] != p && a.nbytes() > 0 &&
                 std::memcmp(a.bytes(), outs[p].bytes(), a.nbytes()) != 0;
  };
  if (static_cast<int64_t>(outs[0].nbytes()) * n < kParallelBytes) {
    for (int p = 0; p < n; ++p) compare(p);
  } else {
    tbb::parallel_for(0, n, compare);
  }
  for (int p = 0; p < n; ++p) {
    if (!differs[p]) continue;
    throw ReplicationError(input_name("output", index, spec) + " is not replicated over mesh " +
                           differing_axes(shape, source[p], p) + ": device " +
                           std::to_string(mesh.device_at(source[p])) + " and device " +
                           std::to_string(mesh.device_at(p)) +
                           " differ: " + first_difference(outs[source[p]], outs[p]) +
                           " (an index in the shard, whose origin in the global array is " +
                           shape_to_string(origin_of(boxes[p])) + ")");
  }
}

// The global shape of an output whose every device returns `local`: each
// dimension times the size of the mesh axes the spec shards it over.
// ShapeError naming both shapes if that overflows int64.
std::vector<int64_t> global_output_shape(const AbstractMesh& shape, const PartitionSpec& spec,
                                         const std::vector<int64_t>& local,
                                         const std::string& context) {
  std::vector<int64_t> global = local;
  for (int d = 0; d < spec.size(); ++d) {
    const int64_t parts = axis_size(shape, spec.dim(d));
    if (__builtin_mul_overflow(local[d], parts, &global[d])) {
      throw ShapeError(context + ": the local shape " + shape_to_string(local) + " times " +
                       std::to_string(parts) + " devices in dimension " + std::to_string(d) +
                       " overflows int64");
    }
  }
  return global;
}

Array gather(const Mesh& mesh, const PartitionSpec& spec, size_t index,
             const std::vector<Array>& outs, bool check_replication) {
  const AbstractMesh& shape = mesh.abstract_mesh();
  const int n = mesh.size();
  const Array& first = outs[0];
  const std::string context = input_name("output", index, spec);
  with_context(context, [&] {
    spec.validate(shape, first.rank());
    return 0;
  });
  const std::vector<int64_t> global_shape =
      global_output_shape(shape, spec, first.shape(), context);
  if (check_replication) check_replicas(mesh, spec, index, global_shape, outs);
  if (!shards_anything(spec)) return first;

  Array global = Array::empty(global_shape, first.dtype());
  std::byte* dst = global.mutable_bytes();
  const std::vector<int64_t> zeros(first.rank(), 0);
  // Only the lowest position of each box writes it.
  std::vector<BoxCopy> copies;
  std::vector<int> writers;
  std::vector<std::vector<DimSlice>> seen;
  for (int p = 0; p < n; ++p) {
    auto box = shard_slice(shape, spec, global_shape, p);
    if (std::find(seen.begin(), seen.end(), box) != seen.end()) continue;
    copies.emplace_back(dtype_size(first.dtype()), first.shape(), first.shape(), zeros,
                        global_shape, origin_of(box));
    writers.push_back(p);
    seen.push_back(std::move(box));
  }
  run_copies(copies, [&](size_t i) { return outs[writers[i]].bytes(); },
             [&](size_t) { return dst; });
  return global;
}

void check_outputs(const Mesh& mesh, size_t num_outputs,
                   const std::vector<std::vector<Array>>& outputs) {
  for (int p = 0; p < mesh.size(); ++p) {
    if (outputs[p].size() != num_outputs) {
      throw InvalidArgumentError("shard_map: device " + std::to_string(mesh.device_at(p)) +
                                 " returned " + std::to_string(outputs[p].size()) +
                                 " outputs but there are " + std::to_string(num_outputs) +
                                 " out_specs");
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      const Array& a = outputs[0][i];
      const Array& b = outputs[p][i];
      if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
        throw ShapeError("shard_map output " + std::to_string(i) + ": device " +
                         std::to_string(mesh.device_at(0)) + " returned " +
                         std::string(dtype_name(a.dtype())) + shape_to_string(a.shape()) +
                         " but device " + std::to_string(mesh.device_at(p)) + " returned " +
                         std::string(dtype_name(b.dtype())) + shape_to_string(b.shape()));
      }
    }
  }
}

}  // namespace

namespace detail {

std::vector<std::vector<Array>> run_on_shards(Runtime& runtime, const Mesh& mesh,
                                              const ShardBody& body,
                                              std::span<const PartitionSpec> in_specs,
                                              std::span<const Array> inputs) {
  if (in_specs.size() != inputs.size()) {
    throw InvalidArgumentError("shard_map got " + std::to_string(inputs.size()) +
                               " inputs but " + std::to_string(in_specs.size()) + " in_specs");
  }
  const AbstractMesh& shape = mesh.abstract_mesh();
  // shards[i][p]: input i on mesh position p.
  std::vector<std::vector<Array>> shards;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto local = with_context(input_name("input", i, in_specs[i]), [&] {
      return shard_shape(shape, in_specs[i], inputs[i].shape());
    });
    shards.push_back(split(shape, in_specs[i], inputs[i], local));
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
  check_outputs(mesh, out_specs.size(), outputs);
  std::vector<Array> results;
  for (size_t i = 0; i < out_specs.size(); ++i) {
    std::vector<Array> per_device(mesh.size());
    for (int p = 0; p < mesh.size(); ++p) per_device[p] = std::move(outputs[p][i]);
    results.push_back(gather(mesh, out_specs[i], i, per_device, check_replication));
  }
  return results;
}

std::vector<Array> shard_map(Runtime& runtime, const Mesh& mesh, const ShardBody& body,
                             std::span<const PartitionSpec> in_specs,
                             std::span<const PartitionSpec> out_specs,
                             std::span<const Array> inputs, ShardMapOptions options) {
  // Catch an out_spec naming an unknown or repeated axis before running
  // anything (its rank is checked against the outputs in gather).
  for (size_t i = 0; i < out_specs.size(); ++i) {
    with_context(input_name("output", i, out_specs[i]), [&] {
      out_specs[i].validate(mesh.abstract_mesh(), out_specs[i].size());
      return 0;
    });
  }
  return assemble(mesh, out_specs, run_on_shards(runtime, mesh, body, in_specs, inputs),
                  options.check_replication);
}

}  // namespace detail

}  // namespace meshsim
