#pragma once
// jax.lax.pargmax / pargmin: for every element of x, the axis index (along the
// one named axis) of the device that holds the largest / smallest value of
// that element. The result is int32 with x's shape, bitwise identical on
// every device of the axis.
//
// Ties go to the lowest axis index (as JAX, which takes the pmin of the
// indices that hold the pmax); -0.0 and 0.0 tie. NaN, as in jnp.argmax /
// jnp.argmin, wins over every number for both: an element that is NaN on
// some device gets the lowest axis index holding a NaN. (jax.lax.pargmax,
// being pmax followed by an equality test, yields INT32_MAX there instead;
// meshsim returns a valid index.) bool compares false < true.
//
// Errors: InvalidArgumentError if `axis` names more than one axis (JAX
// accepts exactly one), UnknownAxisError naming the collective for an unknown
// axis. Members that disagree on dtype or shape get CollectiveMismatchError.

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

Array pargmax(DeviceContext& ctx, const Array& x, const AxisNames& axis);
Array pargmin(DeviceContext& ctx, const Array& x, const AxisNames& axis);

}  // namespace meshsim
