#pragma once
// The reductions psum / pmax / pmin stand for, by name, for code that picks
// one at run time (the CLI's --op, user-written algorithms).

#include "meshsim/runtime/array/dtype.h"

namespace meshsim {

enum class ReduceOp { kSum, kMax, kMin };

const char* reduce_op_name(ReduceOp op);
// The dtype a reduction of `input` produces: int32 for a sum of bool, else `input`.
DType reduce_output_dtype(ReduceOp op, DType input);

}  // namespace meshsim
