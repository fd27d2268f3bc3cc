#pragma once
// visualize_sharding, as jax.debug.visualize_array_sharding: a text picture of
// which devices hold which block of a 1-D or 2-D global array under a
// NamedSharding. A 2-D array's rows go down and its columns across; a 1-D
// array is one row of blocks. Every block shows the ids of the devices that
// hold it (replicas included), with runs of consecutive ids shortened:
//
//   visualize_sharding(NamedSharding(Mesh x=4,y=2, P{"x"}), {16, 8})
//   ┌─────┐
//   │ 0,1 │
//   ├─────┤
//   │ 2,3 │
//   ├─────┤
//   │ 4,5 │
//   ├─────┤
//   │ 6,7 │
//   └─────┘
//
// Throws as shard_shape() for a shape the sharding cannot cut, and ShapeError
// for a rank other than 1 or 2 (a scalar is one block: rank 0 is accepted).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "meshsim/mesh/sharding.h"

namespace meshsim {

std::string visualize_sharding(const NamedSharding& sharding,
                               std::span<const int64_t> global_shape);

// Device ids as a short list: {0, 1, 2, 3, 6} -> "0-3,6". Ids are sorted first.
std::string format_device_list(std::vector<int> ids);

}  // namespace meshsim
