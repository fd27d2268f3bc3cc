#include "meshsim/runtime/drivers/internal/shard_layout.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/drivers/shard_map.h"

namespace meshsim::detail {
namespace {

// Rethrows a mesh-layer error, keeping its type, with the argument it
// concerns.
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

std::vector<int64_t> origin_of(const std::vector<DimSlice>& box) {
  std::vector<int64_t> origin;
  for (const auto& s : box) origin.push_back(s.start);
  return origin;
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

}  // namespace

void check_outputs(const Mesh& mesh, size_t num_outputs,
                   const std::vector<std::vector<Array>>& outputs, const char* driver,
                   OutputCountFrom count_from) {
  for (int p = 0; p < mesh.size(); ++p) {
    if (outputs[p].size() != num_outputs) {
      const std::string expected =
          count_from == OutputCountFrom::kFirstDevice
              ? "device " + std::to_string(mesh.device_at(0)) + " returned " +
                    std::to_string(num_outputs)
              : "there are " + std::to_string(num_outputs) + " out_specs";
      throw InvalidArgumentError(std::string(driver) + ": device " +
                                 std::to_string(mesh.device_at(p)) + " returned " +
                                 std::to_string(outputs[p].size()) + " outputs but " + expected);
    }
    for (size_t i = 0; i < num_outputs; ++i) {
      const Array& a = outputs[0][i];
      const Array& b = outputs[p][i];
      if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
        throw ShapeError(std::string(driver) + " output " + std::to_string(i) + ": device " +
                         std::to_string(mesh.device_at(0)) + " returned " +
                         std::string(dtype_name(a.dtype())) + shape_to_string(a.shape()) +
                         " but device " + std::to_string(mesh.device_at(p)) + " returned " +
                         std::string(dtype_name(b.dtype())) + shape_to_string(b.shape()));
      }
    }
  }
}

void validate_axes(const AbstractMesh& mesh, const PartitionSpec& spec, const std::string& context) {
  with_context(context, [&] {
    spec.validate(mesh, spec.size());
    return 0;
  });
}

std::string argument_name(const char* what, size_t index, const PartitionSpec& spec) {
  return std::string("shard_map ") + what + " " + std::to_string(index) + " (spec " +
         spec.to_string() + ")";
}

ShardLayout make_layout(const AbstractMesh& mesh, const PartitionSpec& spec, Shape global_shape,
                        DType dtype, const std::string& context) {
  ShardLayout layout;
  layout.local_shape =
      with_context(context, [&] { return shard_shape(mesh, spec, global_shape); });
  layout.spec = spec;
  layout.global_shape = std::move(global_shape);
  layout.dtype = dtype;
  layout.sharded = !spec.mentioned_axes().empty();
  const int n = mesh.size();
  layout.source.assign(n, 0);
  if (!layout.sharded) {
    const std::vector<DimSlice> whole = [&] {
      std::vector<DimSlice> box;
      for (int64_t dim : layout.global_shape) box.push_back({0, dim});
      return box;
    }();
    layout.boxes.assign(n, whole);
    layout.writers = {0};
    return layout;
  }
  const size_t element = dtype_size(dtype);
  const Shape zeros(layout.local_shape.size(), 0);
  const Shape& local = layout.local_shape;
  layout.boxes.reserve(n);
  layout.split_copies.reserve(n);
  for (int p = 0; p < n; ++p) {
    layout.boxes.push_back(shard_slice(mesh, spec, layout.global_shape, p));
    const std::vector<int64_t> origin = origin_of(layout.boxes[p]);
    layout.split_copies.emplace_back(element, local, layout.global_shape, origin, local, zeros);
    layout.source[p] = p;
    for (int q = 0; q < p; ++q) {
      if (layout.boxes[q] == layout.boxes[p]) {
        layout.source[p] = q;
        break;
      }
    }
    // Only the lowest position of each box writes it.
    if (layout.source[p] == p) {
      layout.writers.push_back(p);
      layout.gather_copies.emplace_back(element, local, local, zeros, layout.global_shape, origin);
    }
  }
  return layout;
}

Shape global_shape_of(const AbstractMesh& mesh, const PartitionSpec& spec,
                      std::span<const int64_t> local, const std::string& context) {
  with_context(context, [&] {
    spec.validate(mesh, static_cast<int>(local.size()));
    return 0;
  });
  Shape global(local.begin(), local.end());
  for (int d = 0; d < spec.size(); ++d) {
    const int64_t parts = axis_size(mesh, spec.dim(d));
    if (__builtin_mul_overflow(local[d], parts, &global[d])) {
      throw ShapeError(context + ": the local shape " + shape_to_string(local) + " times " +
                       std::to_string(parts) + " devices in dimension " + std::to_string(d) +
                       " overflows int64");
    }
  }
  return global;
}

std::vector<Array> split(const ShardLayout& layout, const Array& global) {
  const size_t n = layout.boxes.size();
  if (!layout.sharded) return std::vector<Array>(n, global);
  std::vector<Array> shards(n);
  for (Array& shard : shards) shard = Array::empty(layout.local_shape, layout.dtype);
  run_copies(layout.split_copies, [&](size_t) { return global.bytes(); },
             [&](size_t p) { return shards[p].mutable_bytes(); });
  return shards;
}

Array gather(const ShardLayout& layout, std::span<const Array> shards) {
  if (!layout.sharded) return shards[0];
  Array global = Array::empty(layout.global_shape, layout.dtype);
  std::byte* dst = global.mutable_bytes();
  run_copies(layout.gather_copies, [&](size_t i) { return shards[layout.writers[i]].bytes(); },
             [&](size_t) { return dst; });
  return global;
}

void check_replicas(const ShardLayout& layout, const Mesh& mesh, std::span<const Array> shards,
                    size_t index) {
  const int n = mesh.size();
  if (layout.writers.size() == static_cast<size_t>(n)) return;  // no replicas
  std::vector<char> differs(n, 0);
  const auto compare = [&](int p) {
    const Array& a = shards[layout.source[p]];
    // memcmp must not see the null bytes() of a zero-size array.
    differs[p] = layout.source[p] != p && a.nbytes() > 0 &&
                 std::memcmp(a.bytes(), shards[p].bytes(), a.nbytes()) != 0;
  };
  if (static_cast<int64_t>(shards[0].nbytes()) * n < kParallelBytes) {
    for (int p = 0; p < n; ++p) compare(p);
  } else {
    tbb::parallel_for(0, n, compare);
  }
  for (int p = 0; p < n; ++p) {
    if (!differs[p]) continue;
    const int q = layout.source[p];
    throw ReplicationError(argument_name("output", index, layout.spec) + " is not replicated over mesh " +
                           differing_axes(mesh.abstract_mesh(), q, p) + ": device " +
                           std::to_string(mesh.device_at(q)) + " and device " +
                           std::to_string(mesh.device_at(p)) +
                           " differ: " + first_difference(shards[q], shards[p]) +
                           " (an index in the shard, whose origin in the global array is " +
                           shape_to_string(origin_of(layout.boxes[p])) + ")");
  }
}

}  // namespace meshsim::detail
