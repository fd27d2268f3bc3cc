#include "meshsim/runtime/drivers/sharded_array.h"

#include <utility>

#include "meshsim/runtime/drivers/internal/shard_layout.h"

namespace meshsim {

struct ShardedArray::State {
  std::shared_ptr<const NamedSharding> sharding;
  std::shared_ptr<const detail::ShardLayout> layout;
  std::vector<Array> shards;
};

ShardedArray::ShardedArray(std::shared_ptr<const NamedSharding> sharding,
                           std::shared_ptr<const detail::ShardLayout> layout,
                           std::vector<Array> shards)
    : state_(std::make_shared<const State>(
          State{std::move(sharding), std::move(layout), std::move(shards)})) {}

const ShardedArray::State& ShardedArray::state() const {
  if (!state_) {
    throw InvalidArgumentError(
        "ShardedArray: used a default-constructed or moved-from ShardedArray");
  }
  return *state_;
}

const NamedSharding& ShardedArray::sharding() const { return *state().sharding; }
const detail::ShardLayout& ShardedArray::layout() const { return *state().layout; }
const Shape& ShardedArray::shape() const { return state().layout->global_shape; }
DType ShardedArray::dtype() const { return state().layout->dtype; }

const Array& ShardedArray::shard(int device_id) const {
  return state().shards[state().sharding->mesh().position_of(device_id)];
}

std::span<const Array> ShardedArray::shards() const { return state().shards; }

Array ShardedArray::gather() const { return detail::gather(layout(), state().shards); }

std::string ShardedArray::to_string() const {
  if (!state_) return "ShardedArray()";
  return "ShardedArray(" + std::string(dtype_name(dtype())) + shape_to_string(shape()) + ", " +
         sharding().to_string() + ")";
}

ShardedArray device_put(const Array& array, const NamedSharding& sharding) {
  auto layout = std::make_shared<const detail::ShardLayout>(
      detail::make_layout(sharding.mesh().abstract_mesh(), sharding.spec(), array.shape(),
                          array.dtype(), "device_put (spec " + sharding.spec().to_string() + ")"));
  std::vector<Array> shards = detail::split(*layout, array);
  return ShardedArray(std::make_shared<const NamedSharding>(sharding), std::move(layout),
                      std::move(shards));
}

}  // namespace meshsim
