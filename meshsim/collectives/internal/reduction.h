#pragma once
// The one elementwise reduction kernel every collective
// and every algorithm uses, so that dtype dispatch and accumulation rules live
// in one place:
// - the reduction runs over inputs in rank order 0..n-1 for every element, so
//   a result does not depend on how work was split (bitwise determinism);
// - float16 / bfloat16 accumulate in float32 and round once at the end;
// - max / min of floats propagate NaN (as XLA), whichever rank holds it;
// - signed integers wrap on overflow (as XLA does), computed in unsigned math;
// - sum of bool counts the true values into int32; max / min of bool are
//   logical or / and.

#include <cstdint>

#include "meshsim/collectives/reduce_op.h"
#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/exec/internal/function_ref.h"

namespace meshsim {

// out[i] = input(0)[i] (op) input(1)[i] (op) ... for i in [0, count), where
// input(r) points at the first of `count` elements of dtype `dtype` and `out`
// has dtype reduce_output_dtype(op, dtype). `out` may be one of the inputs
// only if it is input(0).
void reduce_into(ReduceOp op, DType dtype, int num_inputs, FunctionRef<const void*(int)> input,
                 void* out, int64_t count);

}  // namespace meshsim
