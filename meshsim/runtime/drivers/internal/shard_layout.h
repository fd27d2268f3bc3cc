#pragma once
// ShardLayout: everything about one array on a mesh shape that depends only on
// (mesh shape, spec, global shape, dtype) — the shard shape, the box every
// position holds, which positions are replicas of which, and the copy plans
// of split and gather. shard_map builds one per argument per call; plans and
// ShardedArrays build it once and share it (it is immutable).

#include <span>
#include <string>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/mesh/sharding.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/array/internal/box_copy.h"

namespace meshsim::detail {

struct ShardLayout {
  PartitionSpec spec;
  Shape global_shape;
  Shape local_shape;
  DType dtype = DType::kFloat32;
  // False for a spec that shards nothing: every position holds the whole
  // array, and split / gather share storage instead of copying.
  bool sharded = false;
  std::vector<std::vector<DimSlice>> boxes;  // per mesh position
  std::vector<int> source;                   // lowest position holding the same box
  std::vector<BoxCopy> split_copies;         // global -> shard, per position
  std::vector<int> writers;                  // the positions in `source` order that gather
  std::vector<BoxCopy> gather_copies;        // shard of writers[i] -> global
};

// SpecError / ShapeError / AxisError prefixed with `context` if the spec does
// not fit the mesh or the shape does not divide.
ShardLayout make_layout(const AbstractMesh& mesh, const PartitionSpec& spec, Shape global_shape,
                        DType dtype, const std::string& context);

// The global shape of an array whose every position holds `local`: ShapeError
// prefixed with `context` if that overflows int64 or the spec does not fit.
Shape global_shape_of(const AbstractMesh& mesh, const PartitionSpec& spec,
                      std::span<const int64_t> local, const std::string& context);

// One shard per mesh position (copies in parallel with oneTBB when large).
std::vector<Array> split(const ShardLayout& layout, const Array& global);
// The global array from per-position shards of layout.local_shape; replicas
// other than the lowest position are not read.
Array gather(const ShardLayout& layout, std::span<const Array> shards);
// ReplicationError naming the first replica differing from its source: the
// two devices, the mesh axes they differ in and the first differing index.
// The message names the array as shard_map output `index`.
void check_replicas(const ShardLayout& layout, const Mesh& mesh, std::span<const Array> shards,
                    size_t index);

// SpecError / AxisError prefixed with `context` if the spec names an axis the
// mesh lacks or names one twice (the rank is checked against a shape later).
void validate_axes(const AbstractMesh& mesh, const PartitionSpec& spec,
                   const std::string& context);

// Where the number of outputs a device must return comes from: the
// out_specs (shard_map, plans), or the first device's outputs (pmap, which
// has no out_specs).
enum class OutputCountFrom { kOutSpecs, kFirstDevice };

// InvalidArgumentError if a device returned other than num_outputs outputs,
// ShapeError naming two devices whose output i differs in dtype or shape,
// each naming `driver` (the function the user called).
// outputs[position][i].
void check_outputs(const Mesh& mesh, size_t num_outputs,
                   const std::vector<std::vector<Array>>& outputs,
                   const char* driver = "shard_map",
                   OutputCountFrom count_from = OutputCountFrom::kOutSpecs);

// "shard_map input 1 (spec PartitionSpec('x'))"
std::string argument_name(const char* what, size_t index, const PartitionSpec& spec);

}  // namespace meshsim::detail
