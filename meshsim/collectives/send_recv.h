#pragma once
// jax.lax.psend / jax.lax.precv: ordered point-to-point transfers between the
// members of each group over `axes` (one axis or several, major-to-minor),
// along `perm`, a list of (source, destination) axis-index pairs as in
// ppermute (indices in [-n, n); same validation and InvalidPermutationError
// naming the pair).
//
// psend: the member at a pair's source enqueues x for the member at the pair's
//   destination and returns at once — unless the link between the two devices
//   (the runtime's fabric, messages lane) already holds Link::kSlots messages
//   not yet received; then it waits for the
//   receiver to take one. A member that is no pair's source sends nothing.
// precv: the member at a pair's destination waits for the oldest message from
//   the pair's source not yet received, and returns it; it must have `shape`
//   and `dtype` (else CollectiveShapeError / DTypeError naming both devices, and the
//   message is consumed). A member that is no pair's destination returns zeros
//   of `shape` and `dtype` at once.
// Messages from one source device to one destination device arrive in the
// order they were sent (FIFO), whatever axes and perm each call names; psend
// and precv must name the same axes. Nothing is checked across devices (there is no meeting): each
// device validates its own perm. psend copies x into the message, so nothing
// the sender does afterwards, through any handle or span, changes what the
// receiver gets.
// Waits are cancelled when another device of the launch fails. A precv whose
// message never comes, or a psend whose link stays full, fails the launch
// with a DeadlockError (once every device is stuck or finished) that shows the
// device waiting in "precv" / "psend".
//
// Token: JAX's psend returns a compiler token for precv and optimization
// barriers to take, so the compiler cannot move a receive before the send it
// depends on. Device code here runs in program order, so a Token carries
// nothing; it is threaded through so that code reads like JAX, and Token{}
// stands for lax.create_token().

#include <span>
#include <utility>

#include "meshsim/mesh/arg_span.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/array/dtype.h"

namespace meshsim {

struct Token {};

Token psend(DeviceContext& ctx, const Array& x, const AxisNames& axes,
            ArgSpan<std::pair<int, int>> perm, Token after = {});

Array precv(DeviceContext& ctx, Token after, Shape shape, DType dtype, const AxisNames& axes,
            ArgSpan<std::pair<int, int>> perm);

}  // namespace meshsim
