#pragma once
// shard_map, as jax.shard_map: cut each global input into per-device shards by
// its PartitionSpec (an input is replicated over the mesh axes its spec does
// not name), run `body` on every device of the mesh, and assemble each global
// output from the per-device outputs by its out_spec.
//
// An axis an out_spec does not name means the output is replicated over it:
// by default every replica is compared bitwise and a difference raises
// ReplicationError naming the first differing device pair, the mesh axes
// along which the two differ, and the element (turn off with
// check_replication = false; then the copy at the lowest mesh position wins).
// Inputs must divide evenly (IndivisibleShardError naming the input, the
// dimension and the spec; a bad spec throws as PartitionSpec::validate); a
// global output shape beyond int64 is a ShapeError naming the local shape.
// Zero-size inputs and outputs are fine. Split and gather copy in parallel
// with oneTBB; an input its spec does not shard is passed to every device
// without a copy.

#include <concepts>
#include <functional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "meshsim/mesh/arg_span.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim {

// An out_spec claimed replication over an axis, but the replicas differ.
class ReplicationError : public Error {
 public:
  using Error::Error;
};

struct ShardMapOptions {
  bool check_replication = true;
};

// A body: (device context, this device's shards of the inputs) -> its outputs.
// An owning std::function, so a body kept in a variable cannot dangle.
using ShardBody = std::function<std::vector<Array>(DeviceContext&, std::span<const Array>)>;

namespace detail {
std::vector<Array> shard_map(Runtime& runtime, const Mesh& mesh, const ShardBody& body,
                             std::span<const PartitionSpec> in_specs,
                             std::span<const PartitionSpec> out_specs,
                             std::span<const Array> inputs, ShardMapOptions options);
// The two halves of shard_map, for drivers (pmap) that learn their out_specs
// from the outputs: split + run gives outputs[position][output]; assemble
// gathers them, once check_outputs (drivers/internal/shard_layout.h) found
// that every device returned out_specs.size() outputs alike.
std::vector<std::vector<Array>> run_on_shards(Runtime& runtime, const Mesh& mesh,
                                              const ShardBody& body,
                                              std::span<const PartitionSpec> in_specs,
                                              std::span<const Array> inputs);
std::vector<Array> assemble(const Mesh& mesh, std::span<const PartitionSpec> out_specs,
                            std::vector<std::vector<Array>> outputs, bool check_replication);

// A body returning one Array or a std::vector<Array>, as a ShardBody.
template <class F>
ShardBody to_shard_body(F&& body) {
  using Result = std::invoke_result_t<F&, DeviceContext&, std::span<const Array>>;
  if constexpr (std::is_convertible_v<Result, std::vector<Array>>) {
    return ShardBody(std::forward<F>(body));
  } else {
    static_assert(std::is_convertible_v<Result, Array>,
                  "a shard_map body returns an Array or a std::vector<Array>");
    return [f = std::forward<F>(body)](DeviceContext& ctx, std::span<const Array> shards) mutable {
      return std::vector<Array>{f(ctx, shards)};
    };
  }
}
}  // namespace detail

// `body(ctx, shards)` returns one Array or a std::vector<Array>; the specs and
// inputs may be braced lists: shard_map(rt, mesh, f, {P{"x"}, P{}}, {P{"x"}}, {a, b}).
template <class F>
  requires std::invocable<F&, DeviceContext&, std::span<const Array>>
std::vector<Array> shard_map(Runtime& runtime, const Mesh& mesh, F&& body,
                             ArgSpan<PartitionSpec> in_specs, ArgSpan<PartitionSpec> out_specs,
                             ArgSpan<Array> inputs, ShardMapOptions options = {}) {
  return detail::shard_map(runtime, mesh, detail::to_shard_body(std::forward<F>(body)), in_specs,
                           out_specs, inputs, options);
}

// One input, one output: `body(ctx, shard)` returns the device's output.
template <class F>
  requires std::invocable<F&, DeviceContext&, const Array&>
Array shard_map(Runtime& runtime, const Mesh& mesh, F&& body, const PartitionSpec& in_spec,
                const PartitionSpec& out_spec, const Array& input, ShardMapOptions options = {}) {
  ShardBody wrapped = [f = std::forward<F>(body)](DeviceContext& ctx,
                                                  std::span<const Array> shards) mutable {
    return std::vector<Array>{f(ctx, shards[0])};
  };
  return detail::shard_map(runtime, mesh, wrapped, std::span(&in_spec, 1), std::span(&out_spec, 1),
                           std::span(&input, 1), options)[0];
}

}  // namespace meshsim
