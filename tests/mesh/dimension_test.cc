// canonical_dimension against JAX's canonicalize_axis: negative indices count
// from the end; anything outside [-rank, rank) is rejected.

#include "meshsim/mesh/internal/dimension.h"

#include <gtest/gtest.h>

namespace meshsim::dimension_test {
namespace {

TEST(CanonicalDimension, KeepsIndicesInRange) {
  EXPECT_EQ(canonical_dimension(0, 3), 0);
  EXPECT_EQ(canonical_dimension(2, 3), 2);
}

TEST(CanonicalDimension, CountsNegativeIndicesFromTheEnd) {
  EXPECT_EQ(canonical_dimension(-1, 3), 2);
  EXPECT_EQ(canonical_dimension(-3, 3), 0);
}

TEST(CanonicalDimension, RejectsIndicesOutsideTheRank) {
  EXPECT_EQ(canonical_dimension(3, 3), std::nullopt);
  EXPECT_EQ(canonical_dimension(-4, 3), std::nullopt);
  EXPECT_EQ(canonical_dimension(0, 0), std::nullopt);
}

}  // namespace
}  // namespace meshsim::dimension_test
