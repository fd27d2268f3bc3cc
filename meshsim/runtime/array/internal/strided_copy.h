#pragma once
// strided_gather: makes a contiguous row-major array out of a strided view of
// another one — the one loop behind broadcast_to (stride 0), slice (strides
// times step) and transpose (permuted strides).

#include <cstddef>
#include <cstdint>
#include <span>

#include "meshsim/runtime/array/dtype.h"

namespace meshsim {

// Writes to `dst`, in row-major order of `shape`, the element of `dtype` at
// byte offset sum(index[d] * src_strides[d]) from `src` for every multi-index
// of `shape`. Strides are in bytes and may be 0. Touches no pointer when
// `shape` has no elements.
void strided_gather(DType dtype, std::span<const int64_t> shape, const std::byte* src,
                    std::span<const int64_t> src_strides, std::byte* dst);

}  // namespace meshsim
