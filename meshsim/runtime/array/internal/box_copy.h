#pragma once
// BoxCopy: copies an N-d box (a rectangular block) between two row-major
// arrays of the same element size — the one copy routine behind shard_map's
// split and gather. The box is cut into pieces (rows of its contiguous inner
// run, and long runs into ~1 MiB parts) so callers can spread the pieces over
// threads (tbb::parallel_for); pieces never overlap in the destination.

#include <cstddef>
#include <cstdint>
#include <span>

#include <boost/container/small_vector.hpp>

namespace meshsim {

class BoxCopy {
 public:
  // Copies the box of `sizes` starting at `src_origin` in an array of shape
  // `src_shape` to `dst_origin` in an array of shape `dst_shape`.
  BoxCopy(size_t element_size, std::span<const int64_t> sizes, std::span<const int64_t> src_shape,
          std::span<const int64_t> src_origin, std::span<const int64_t> dst_shape,
          std::span<const int64_t> dst_origin);

  // Whether a box of `sizes` is one contiguous run of bytes in both arrays
  // wherever it starts along its first dim of more than one element: every
  // later dim is whole in both. Then one memcpy moves it, and a caller that
  // copies many small boxes can skip building a BoxCopy.
  static bool one_run(std::span<const int64_t> sizes, std::span<const int64_t> src_shape,
                      std::span<const int64_t> dst_shape);

  int64_t num_pieces() const { return rows_ * parts_per_row_; }
  int64_t bytes() const { return rows_ * run_bytes_; }
  void copy_piece(const std::byte* src, std::byte* dst, int64_t piece) const;
  void copy_all(const std::byte* src, std::byte* dst) const;

 private:
  // Up to kInlineDims dims without allocating: collectives build a BoxCopy
  // per call.
  static constexpr size_t kInlineDims = 6;
  using Dims = boost::container::small_vector<int64_t, kInlineDims>;
  // Outer dimensions (those before the contiguous run), with both strides.
  Dims outer_sizes_, src_strides_, dst_strides_;
  int64_t src_base_ = 0, dst_base_ = 0;  // byte offsets of the box origin
  int64_t run_bytes_ = 0, rows_ = 1, part_bytes_ = 0, parts_per_row_ = 1;
};

}  // namespace meshsim
