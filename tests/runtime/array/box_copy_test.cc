// BoxCopy against a naive element-by-element copy written here: boxes on 0-d
// to 4-d arrays, full / partial / contiguous / strided, zero-size boxes, and
// runs long enough to be cut into several pieces.

#include "meshsim/runtime/array/internal/box_copy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "meshsim/runtime/array/array.h"

namespace meshsim::box_copy_test {
namespace {

struct BoxCase {
  std::string name;
  Shape sizes, src_shape, src_origin, dst_shape, dst_origin;
  // num_pieces(): the rows of the contiguous inner run (trailing dims the box
  // covers in both arrays merge into it), times the ~1 MiB parts of a run.
  int64_t pieces = 0;
};

// Row-major offset of `index` in `shape`, in elements.
int64_t offset_of(const Shape& shape, const Shape& index) {
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + index[d];
  return offset;
}

// Copies the box one element at a time: every multi-index j of `sizes` goes
// from src_origin + j to dst_origin + j.
void naive_copy(const BoxCase& c, size_t element_size, const std::byte* src, std::byte* dst) {
  const int64_t count = num_elements(c.sizes);
  Shape j(c.sizes.size(), 0), from(c.sizes.size()), to(c.sizes.size());
  for (int64_t e = 0; e < count; ++e) {
    int64_t rest = e;
    for (size_t d = c.sizes.size(); d-- > 0;) {
      j[d] = rest % c.sizes[d];
      rest /= c.sizes[d];
      from[d] = c.src_origin[d] + j[d];
      to[d] = c.dst_origin[d] + j[d];
    }
    std::memcpy(dst + offset_of(c.dst_shape, to) * element_size,
                src + offset_of(c.src_shape, from) * element_size, element_size);
  }
}

// Bytes 1..251 repeating (never 0), shifted by `salt` so src and dst differ.
std::vector<std::byte> pattern(int64_t nbytes, int salt) {
  std::vector<std::byte> out(nbytes);
  for (int64_t i = 0; i < nbytes; ++i) out[i] = std::byte(1 + (i * 7 + salt) % 251);
  return out;
}

// The first byte where the buffers differ, or -1.
int64_t first_mismatch(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return ia == a.end() && ib == b.end() ? -1 : ia - a.begin();
}

void PrintTo(const BoxCase& c, std::ostream* os) { *os << c.name; }

class BoxCopyTest : public ::testing::TestWithParam<std::tuple<BoxCase, size_t>> {
 protected:
  const BoxCase& box() const { return std::get<0>(GetParam()); }
  size_t element_size() const { return std::get<1>(GetParam()); }
  BoxCopy make() const {
    const BoxCase& c = box();
    return BoxCopy(element_size(), c.sizes, c.src_shape, c.src_origin, c.dst_shape, c.dst_origin);
  }
  int64_t src_bytes() const { return num_elements(box().src_shape) * element_size(); }
  int64_t dst_bytes() const { return num_elements(box().dst_shape) * element_size(); }
};

TEST_P(BoxCopyTest, CopyAllMatchesNaiveCopy) {
  const auto src = pattern(src_bytes(), 0);
  std::vector<std::byte> expected = pattern(dst_bytes(), 100);
  std::vector<std::byte> actual = expected;
  naive_copy(box(), element_size(), src.data(), expected.data());
  make().copy_all(src.data(), actual.data());
  EXPECT_EQ(first_mismatch(actual, expected), -1);
}

// Pieces in reverse order give the same bytes as copy_all.
TEST_P(BoxCopyTest, EveryPieceInAnyOrderMatchesNaiveCopy) {
  const BoxCopy copy = make();
  EXPECT_EQ(copy.num_pieces(), box().pieces);
  EXPECT_EQ(copy.bytes(), num_elements(box().sizes) * static_cast<int64_t>(element_size()));
  const auto src = pattern(src_bytes(), 0);
  std::vector<std::byte> expected = pattern(dst_bytes(), 100);
  std::vector<std::byte> actual = expected;
  naive_copy(box(), element_size(), src.data(), expected.data());
  for (int64_t piece = copy.num_pieces(); piece-- > 0;) {
    copy.copy_piece(src.data(), actual.data(), piece);
  }
  EXPECT_EQ(first_mismatch(actual, expected), -1);
}

// Each destination byte of the box is written by exactly one piece, and no
// byte outside the box is written: pieces may run on different threads.
TEST_P(BoxCopyTest, PiecesPartitionTheDestinationBox) {
  const BoxCopy copy = make();
  const std::vector<std::byte> src = pattern(src_bytes(), 0);  // no zero byte
  std::vector<std::byte> in_box(dst_bytes(), std::byte{0});
  naive_copy(box(), element_size(), src.data(), in_box.data());
  std::vector<int> writes(dst_bytes(), 0);
  std::vector<std::byte> dst(dst_bytes());
  for (int64_t piece = 0; piece < copy.num_pieces(); ++piece) {
    std::fill(dst.begin(), dst.end(), std::byte{0});
    copy.copy_piece(src.data(), dst.data(), piece);
    for (int64_t i = 0; i < dst_bytes(); ++i) writes[i] += dst[i] != std::byte{0};
  }
  for (int64_t i = 0; i < dst_bytes(); ++i) {
    ASSERT_EQ(writes[i], in_box[i] != std::byte{0} ? 1 : 0) << "destination byte " << i;
  }
}

const BoxCase kCases[] = {
    {"Scalar", {}, {}, {}, {}, {}, 1},
    {"FullVector", {7}, {7}, {0}, {7}, {0}, 1},
    {"PartialVector", {4}, {10}, {3}, {6}, {1}, 1},
    {"FullRowsAreOneRun", {2, 4}, {5, 4}, {1, 0}, {2, 4}, {0, 0}, 1},
    {"StridedMatrix", {3, 2}, {5, 6}, {1, 3}, {4, 5}, {1, 2}, 3},
    {"LeadingBlockOf3d", {2, 3, 5}, {4, 3, 5}, {2, 0, 0}, {2, 3, 5}, {0, 0, 0}, 1},
    {"MiddleDimPartial3d", {2, 3, 5}, {4, 6, 5}, {1, 2, 0}, {3, 3, 5}, {1, 0, 0}, 2},
    {"GatherIntoLarger3d", {2, 3, 4}, {2, 3, 4}, {0, 0, 0}, {4, 6, 4}, {2, 3, 0}, 2},
    {"Strided4d", {2, 2, 2, 3}, {3, 4, 2, 5}, {1, 1, 0, 2}, {2, 3, 2, 4}, {0, 1, 0, 1}, 8},
    {"UnitDims4d", {1, 2, 1, 6}, {1, 4, 1, 6}, {0, 2, 0, 0}, {1, 2, 1, 6}, {0, 0, 0, 0}, 1},
    {"ZeroRows", {0, 3}, {4, 3}, {2, 0}, {2, 3}, {1, 0}, 0},
    {"ZeroColumns", {2, 0}, {4, 3}, {1, 1}, {2, 3}, {0, 2}, 0},
    {"ZeroSizeArrays", {3, 0, 2}, {3, 0, 2}, {0, 0, 0}, {3, 0, 2}, {0, 0, 0}, 0},
};

// 300'001 four-byte elements: a run of 1.2 MB, cut in two parts.
constexpr int64_t kLong = 300'001;
const BoxCase kLongCases[] = {
    {"LongRunSplit", {kLong}, {kLong}, {0}, {kLong}, {0}, 2},
    {"LongRowsEachSplit", {2, 1, kLong}, {3, 2, kLong}, {1, 1, 0}, {2, 1, kLong}, {0, 0, 0}, 4},
};

// one_run says without building a copy what a copy of one row says: in
// every case with bytes to move and no run long enough to be cut, the box is
// one run exactly when it is one piece.
TEST(BoxCopyOneRunTest, IsOnePieceWhenThereAreBytes) {
  for (const BoxCase& c : kCases) {
    if (c.pieces == 0) continue;
    EXPECT_EQ(BoxCopy::one_run(c.sizes, c.src_shape, c.dst_shape), c.pieces == 1) << c.name;
  }
  // Whole in one array but not the other: two runs.
  EXPECT_FALSE(BoxCopy::one_run(Shape{2, 4}, Shape{2, 4}, Shape{2, 8}));
  EXPECT_TRUE(BoxCopy::one_run(Shape{1, 4}, Shape{2, 4}, Shape{2, 8}));
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<BoxCase, size_t>>& info) {
  return std::get<0>(info.param).name + "_" + std::to_string(std::get<1>(info.param)) + "byte";
}

INSTANTIATE_TEST_SUITE_P(Boxes, BoxCopyTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(size_t{1}, size_t{4}, size_t{8})),
                         case_name);
INSTANTIATE_TEST_SUITE_P(LongRuns, BoxCopyTest,
                         ::testing::Combine(::testing::ValuesIn(kLongCases),
                                            ::testing::Values(size_t{4})),
                         case_name);

}  // namespace
}  // namespace meshsim::box_copy_test
