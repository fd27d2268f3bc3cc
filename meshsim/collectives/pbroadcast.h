#pragma once
// jax.lax.pbroadcast: every member of each group over `axes` (one axis or
// several, major-to-minor) receives the x of the member at axis index
// `source` — JAX's psum(where(axis_index(axes) == source, x, 0), axes),
// without the arithmetic, so every dtype and every bit pattern (-0.0, NaN) is
// kept.
//
// InvalidArgumentError naming the source and the axis size unless
// 0 <= source < axis_size. Every member must pass the same source, dtype and
// shape, else every member gets CollectiveMismatchError. The result is a copy
// in the member's own storage: nothing the source does afterwards, through any
// handle or span, changes it.

#include <string_view>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

// `algorithm`: "" for the runtime's choice, "auto", or a name of
// algorithms/registry.h.
Array pbroadcast(DeviceContext& ctx, const Array& x, const AxisNames& axes, int source,
                 std::string_view algorithm = {});

}  // namespace meshsim
