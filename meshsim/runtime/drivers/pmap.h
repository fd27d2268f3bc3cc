#pragma once
// pmap, as jax.pmap: map `body` over one named axis of devices. Input i is
// split along its dimension in_axes[i] (that dimension is removed from what
// the device sees) or, when in_axes[i] is std::nullopt, broadcast whole to every
// device. Every output is stacked along a new dimension out_axes[i]. The
// number of devices is the size of the mapped dimension; they are devices
// 0..n-1 of the runtime unless `devices` names others (a mapped dimension
// larger than the runtime is a ShapeError naming the input's shape). Built on
// shard_map.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "meshsim/runtime/drivers/shard_map.h"

namespace meshsim {

struct PmapOptions {
  // Default for every input: 0. Size must match the inputs when given.
  std::vector<std::optional<int>> in_axes = {};
  // Default for every output: 0.
  std::vector<int> out_axes = {};
  // Devices to run on (default: 0..n-1).
  std::vector<int> devices = {};
};

namespace detail {
std::vector<Array> pmap(Runtime& runtime, const ShardBody& body, const std::string& axis_name,
                        std::span<const Array> inputs, const PmapOptions& options);
}  // namespace detail

// `body(ctx, shards)` returns one Array or a std::vector<Array>.
template <class F>
  requires std::invocable<F&, DeviceContext&, std::span<const Array>>
std::vector<Array> pmap(Runtime& runtime, F&& body, const std::string& axis_name,
                        ArgSpan<Array> inputs, const PmapOptions& options = {}) {
  return detail::pmap(runtime, detail::to_shard_body(std::forward<F>(body)), axis_name, inputs,
                      options);
}

}  // namespace meshsim
