#pragma once
// empty_counted: Array::empty for a shape whose element count the caller
// already knows, so the shape is not counted again: a collective's result,
// whose count follows from its input's (all_gather: n times it) on every
// call. Internal, since a wrong count would make a wrong array.

#include <cstdint>

#include "meshsim/runtime/array/array.h"

namespace meshsim::detail {

// `size` must be num_elements(shape). The byte limit is checked as by
// Array::empty (ShapeError past Array::kMaxBytes).
Array empty_counted(const Shape& shape, int64_t size, DType dtype);

}  // namespace meshsim::detail
