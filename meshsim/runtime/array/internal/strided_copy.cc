#include "meshsim/runtime/array/internal/strided_copy.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace meshsim {

void strided_gather(DType dtype, std::span<const int64_t> shape, const std::byte* src,
                    std::span<const int64_t> src_strides, std::byte* dst) {
  if (std::ranges::any_of(shape, [](int64_t d) { return d == 0; })) return;
  visit_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    const int rank = static_cast<int>(shape.size());
    const int64_t inner = rank == 0 ? 1 : shape[rank - 1];
    const int64_t inner_stride = rank == 0 ? 0 : src_strides[rank - 1];
    // An odometer over the outer dims; the inner dim is one run.
    std::vector<int64_t> index(std::max(rank - 1, 0), 0);
    int64_t offset = 0;
    T* out = reinterpret_cast<T*>(dst);
    while (true) {
      const std::byte* row = src + offset;
      if (inner_stride == static_cast<int64_t>(sizeof(T))) {
        std::memcpy(out, row, inner * sizeof(T));
      } else {
        for (int64_t i = 0; i < inner; ++i) {
          std::memcpy(out + i, row + i * inner_stride, sizeof(T));
        }
      }
      out += inner;
      int d = rank - 2;
      for (; d >= 0; --d) {
        offset += src_strides[d];
        if (++index[d] < shape[d]) break;
        offset -= index[d] * src_strides[d];
        index[d] = 0;
      }
      if (d < 0) return;
    }
  });
}

}  // namespace meshsim
