#include "meshsim/runtime/array/internal/box_copy.h"

#include <algorithm>
#include <cstring>

namespace meshsim {
namespace {

constexpr int64_t kPartBytes = 1 << 20;

template <class Dims>
Dims byte_strides(std::span<const int64_t> shape, size_t element_size) {
  Dims strides(shape.size());
  int64_t stride = static_cast<int64_t>(element_size);
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

}  // namespace

BoxCopy::BoxCopy(size_t element_size, std::span<const int64_t> sizes,
                 std::span<const int64_t> src_shape, std::span<const int64_t> src_origin,
                 std::span<const int64_t> dst_shape, std::span<const int64_t> dst_origin) {
  const auto src_strides = byte_strides<Dims>(src_shape, element_size);
  const auto dst_strides = byte_strides<Dims>(dst_shape, element_size);
  const int rank = static_cast<int>(sizes.size());
  for (int d = 0; d < rank; ++d) {
    src_base_ += src_origin[d] * src_strides[d];
    dst_base_ += dst_origin[d] * dst_strides[d];
  }
  // The contiguous run: trailing dims the box covers fully in both arrays,
  // plus the first dim (from the end) that it does not.
  run_bytes_ = static_cast<int64_t>(element_size);
  int d = rank - 1;
  for (; d >= 0; --d) {
    run_bytes_ *= sizes[d];
    if (sizes[d] != src_shape[d] || sizes[d] != dst_shape[d]) {
      --d;
      break;
    }
  }
  for (int outer = 0; outer <= d; ++outer) {
    outer_sizes_.push_back(sizes[outer]);
    src_strides_.push_back(src_strides[outer]);
    dst_strides_.push_back(dst_strides[outer]);
    rows_ *= sizes[outer];
  }
  if (run_bytes_ == 0) rows_ = 0;
  part_bytes_ = std::max<int64_t>(1, std::min(run_bytes_, kPartBytes));
  parts_per_row_ = std::max<int64_t>(1, (run_bytes_ + part_bytes_ - 1) / part_bytes_);
}

bool BoxCopy::one_run(std::span<const int64_t> sizes, std::span<const int64_t> src_shape,
                      std::span<const int64_t> dst_shape) {
  bool inner = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (inner && (sizes[d] != src_shape[d] || sizes[d] != dst_shape[d])) return false;
    inner = inner || sizes[d] > 1;
  }
  return true;
}

void BoxCopy::copy_piece(const std::byte* src, std::byte* dst, int64_t piece) const {
  int64_t row = piece / parts_per_row_;
  const int64_t part = piece % parts_per_row_;
  int64_t src_offset = src_base_, dst_offset = dst_base_;
  for (size_t d = outer_sizes_.size(); d-- > 0;) {
    const int64_t index = row % outer_sizes_[d];
    row /= outer_sizes_[d];
    src_offset += index * src_strides_[d];
    dst_offset += index * dst_strides_[d];
  }
  const int64_t begin = part * part_bytes_;
  const int64_t length = std::min(part_bytes_, run_bytes_ - begin);
  std::memcpy(dst + dst_offset + begin, src + src_offset + begin, length);
}

void BoxCopy::copy_all(const std::byte* src, std::byte* dst) const {
  for (int64_t p = 0; p < num_pieces(); ++p) copy_piece(src, dst, p);
}

}  // namespace meshsim
