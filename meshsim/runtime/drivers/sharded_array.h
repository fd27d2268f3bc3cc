#pragma once
// ShardedArray, as a jax.Array with a NamedSharding: a global array kept as
// one shard per device of a concrete mesh. device_put cuts a host Array into
// shards; a ShardMapPlan takes ShardedArrays and returns ShardedArrays, so
// a loop of plan calls never goes back to the host; gather() assembles the
// global Array only when asked.
//
// Memory and lifetime: a ShardedArray is immutable and a cheap handle (one
// reference count): copies share the shards. The shards live as long as some
// ShardedArray copy, or some Array obtained from shard(), refers to them; the
// last one going frees them (no runtime or plan keeps them). Shards are
// Arrays, copy-on-write, so a body that writes to a shard it was given writes
// to its own copy and the ShardedArray never changes.
//
// Thread safety: like Array and std::shared_ptr. Any number of threads may
// read one ShardedArray (shard, gather, pass it to plans) at once.

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/sharding.h"
#include "meshsim/runtime/array/array.h"

namespace meshsim {

namespace detail {
struct ShardLayout;
}

// Arrays (or a plan and its arguments) live on different device sets; the
// message names both.
class DeviceMismatchError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};

class ShardedArray {
 public:
  // An empty float32 array of shape (0) on no devices; only assignment and
  // the destructor are valid on it (other members throw InvalidArgumentError).
  ShardedArray() = default;

  const NamedSharding& sharding() const;
  const Mesh& mesh() const { return sharding().mesh(); }
  // The global shape and dtype.
  const Shape& shape() const;
  DType dtype() const;
  // The shard held by a device (shape sharding().shard_shape(shape())).
  // MeshError if the device is not in the mesh.
  const Array& shard(int device_id) const;
  // The shards in mesh position order.
  std::span<const Array> shards() const;
  // The global host Array: copies every distinct shard once (replicas are not
  // read). An unsharded spec returns the shard itself, without a copy.
  Array gather() const;

  // "ShardedArray(int32(8, 4), NamedSharding(...))"
  std::string to_string() const;

  // For drivers: shards[p] is the shard at mesh position p of `sharding`,
  // laid out as `layout` says (the shapes are trusted, not checked).
  ShardedArray(std::shared_ptr<const NamedSharding> sharding,
               std::shared_ptr<const detail::ShardLayout> layout, std::vector<Array> shards);
  const detail::ShardLayout& layout() const;

 private:
  struct State;
  const State& state() const;
  std::shared_ptr<const State> state_;
};

// jax.device_put(array, sharding): a ShardedArray holding the shards of
// `array`. SpecError / ShapeError naming the spec and shape if they do not fit.
// A spec that shards nothing shares the host array's storage on every device
// (no copy).
ShardedArray device_put(const Array& array, const NamedSharding& sharding);

}  // namespace meshsim
