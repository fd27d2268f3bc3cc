#pragma once
// jax.lax.axis_index / axis_size as free functions, so that sharded code reads
// like its JAX original: axis_index(ctx, "x") for lax.axis_index('x').
// Both forward to DeviceContext; over several axes the index combines them
// major-to-minor (on (i=4, j=2), axis_index(ctx, {"i", "j"}) = i*2 + j).
// UnknownAxisError for an axis the mesh does not have, DuplicateAxisError for
// one named twice; the message names the function.

#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

int axis_index(const DeviceContext& ctx, const AxisNames& axes);
int axis_size(const DeviceContext& ctx, const AxisNames& axes);

}  // namespace meshsim
