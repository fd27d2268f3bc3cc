#pragma once
// Shape operations on Arrays, as in jax.lax / jax.numpy: what a test of a
// sharded program writes by hand to build inputs and expected results.
// Axes may be negative (counted from the end) wherever JAX allows it. Every
// result is a new Array except where noted (reshape-like results share
// storage, see Array::reshape). Errors name the shapes involved: ShapeError
// for shapes, axes and indices that do not fit, DTypeError for dtypes,
// InvalidArgumentError for other bad arguments (a non-positive stride, an
// empty list of arrays). Lists are ArgSpans: slice(a, {0, 1}, {2, 3}).

#include <cstdint>

#include "meshsim/mesh/arg_span.h"
#include "meshsim/runtime/array/array.h"

namespace meshsim {

// numpy broadcasting: `a` viewed with `shape`, aligning trailing dims; each
// dim of `a` must equal the target's or be 1. Shares storage if the shape is
// unchanged.
Array broadcast_to(const Array& a, const Shape& shape);

// jax.lax.slice: elements start[d], start[d] + strides[d], ... below
// limit[d] in every dim d. Needs 0 <= start <= limit <= dim and strides >= 1
// (empty strides: all 1). The result's dim d is ceil((limit - start) / stride).
Array slice(const Array& a, ArgSpan<int64_t> start, ArgSpan<int64_t> limit,
            ArgSpan<int64_t> strides = {});

// jax.lax.dynamic_slice: the block of `sizes` at `start`. Like JAX, a negative
// start index has the dim added once, then every start is clamped into
// [0, dim - size], so the block is always in bounds and never an error; sizes
// must be within [0, dim].
Array dynamic_slice(const Array& a, ArgSpan<int64_t> start,
                    ArgSpan<int64_t> sizes);

// jax.lax.dynamic_update_slice: a copy of `a` with `update` written at
// `start`, start indices treated as in dynamic_slice (clamped so the update
// fits). `update` has a's rank, dims no larger, and a's dtype (DTypeError
// otherwise, as in JAX).
Array dynamic_update_slice(const Array& a, const Array& update, ArgSpan<int64_t> start);

// jnp.concatenate: joins arrays of one rank (at least 1) along `axis`; the
// other dims must agree. The dtype is promote_types over all inputs.
Array concatenate(ArgSpan<Array> arrays, int axis = 0);

// jnp.stack: joins arrays of one shape along a new axis, in [-(rank + 1),
// rank]. The dtype is promote_types over all inputs.
Array stack(ArgSpan<Array> arrays, int axis = 0);

// jnp.expand_dims: inserts a dim of 1 at each of `axes`, which are positions
// in the result (rank + axes.size() dims) and must be distinct. Shares storage.
Array expand_dims(const Array& a, ArgSpan<int> axes);

// jnp.squeeze: removes the dims `axes`, each of which must be 1 and
// distinct. Shares storage.
Array squeeze(const Array& a, ArgSpan<int> axes);
// jnp.squeeze with axis=None: removes every dim of 1.
Array squeeze(const Array& a);

// jnp.transpose: dim d of the result is dim perm[d] of `a`; perm must be a
// permutation of the axes.
Array transpose(const Array& a, ArgSpan<int> perm);
// jnp.transpose with axes=None: reverses the dims.
Array transpose(const Array& a);

}  // namespace meshsim
