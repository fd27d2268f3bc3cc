#pragma once
// Elementwise arithmetic on Arrays with JAX's semantics (jnp.add, subtract,
// multiply, true_divide), for building inputs and expected results of
// sharded programs in tests.
//
// Shapes broadcast as in numpy (trailing dims aligned, a dim of 1 stretches;
// a rank-0 array is a scalar); ShapeError naming both shapes otherwise.
// Dtypes: both operands convert to promote_types(a, b) (dtype.h: JAX's
// lattice with x64; Arrays are never weakly typed). Then:
// - integers wrap on overflow (two's complement), as XLA does;
// - float16 / bfloat16 round every result to their precision, as XLA does;
// - bool: + is logical or, * is logical and, - is a DTypeError (JAX refuses
//   boolean subtract);
// - / is true division: integer and bool operands give float64 (JAX with
//   jax_enable_x64; without it JAX gives float32), float operands keep their
//   promoted dtype. Integer division by zero thus gives inf or nan.

#include "meshsim/runtime/array/array.h"

namespace meshsim {

Array operator+(const Array& a, const Array& b);
Array operator-(const Array& a, const Array& b);
Array operator*(const Array& a, const Array& b);
Array operator/(const Array& a, const Array& b);

// The shape numpy broadcasting gives two shapes; ShapeError naming both if
// they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace meshsim
