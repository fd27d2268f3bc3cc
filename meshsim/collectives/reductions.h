#pragma once
// jax.lax.psum / pmax / pmin: reduce `x` elementwise over the devices of the
// named axes (one or several, major-to-minor), optionally within
// axis_index_groups (each group reduced separately; groups must cover every
// axis index exactly once). Every member of a group receives bitwise identical
// results; psum of bool gives int32. `algorithm` chooses how it runs ("" for
// the runtime's choice, "auto", or a name of algorithms/registry.h). Members must call the same operation with
// the same dtype and shape, else every member gets CollectiveMismatchError.

#include <string_view>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

Array psum(DeviceContext& ctx, const Array& x, const AxisNames& axes,
           const AxisIndexGroups& axis_index_groups = {}, std::string_view algorithm = {});
Array pmax(DeviceContext& ctx, const Array& x, const AxisNames& axes,
           const AxisIndexGroups& axis_index_groups = {}, std::string_view algorithm = {});
Array pmin(DeviceContext& ctx, const Array& x, const AxisNames& axes,
           const AxisIndexGroups& axis_index_groups = {}, std::string_view algorithm = {});

// jax.lax.pmean: psum(x) divided by the size of the device's group (its
// axis_index_group when groups are given, which may differ in size).
// - float32 / float64: the psum, then one division in that type, as JAX.
// - float16 / bfloat16: the sum accumulated in float32 (as psum does), divided
//   in float32 and rounded once to x's dtype. (JAX rounds the psum to x's
//   dtype first and divides there; meshsim rounds once.)
// - integers and bool: float32, as JAX's true division gives: the integer
//   psum (which wraps on overflow, bool counts into int32) converted to
//   float32, then divided in float32. int64 and uint32 sums above 2^24 round
//   in that conversion.
Array pmean(DeviceContext& ctx, const Array& x, const AxisNames& axes,
            const AxisIndexGroups& axis_index_groups = {}, std::string_view algorithm = {});

}  // namespace meshsim
