// Shape: a vector of int64_t with its first kInline values in the object.
// Each operation is checked against std::vector<int64_t> doing the same, on
// both sides of the inline capacity.

#include "meshsim/runtime/array/shape.h"

#include <gtest/gtest.h>

#include <numeric>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace meshsim::shape_test {
namespace {

std::vector<int64_t> iota_vector(size_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 1);
  return v;
}

bool same(const Shape& s, const std::vector<int64_t>& v) {
  return s.size() == v.size() && std::equal(s.begin(), s.end(), v.begin());
}

class ShapeSizes : public ::testing::TestWithParam<size_t> {};

TEST_P(ShapeSizes, BuildsCopiesAndMovesLikeAVector) {
  const std::vector<int64_t> v = iota_vector(GetParam());
  const Shape s(v);
  EXPECT_TRUE(same(s, v));
  EXPECT_EQ(s.to_vector(), v);
  EXPECT_EQ(s.capacity() > Shape::kInline, v.size() > Shape::kInline);
  Shape copy = s;
  EXPECT_TRUE(same(copy, v));
  if (!v.empty()) {
    copy[0] = 99;  // the copy owns its values
    EXPECT_EQ(s[0], 1);
  }
  Shape moved = std::move(copy);
  EXPECT_EQ(moved.size(), v.size());
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
  Shape assigned{5};
  assigned = s;
  EXPECT_EQ(assigned, s);
  assigned = std::move(moved);
  EXPECT_EQ(assigned.size(), v.size());
  const std::span<const int64_t> view = s;
  EXPECT_EQ(view.size(), v.size());
  EXPECT_EQ(Shape(v.begin(), v.end()), s);
  EXPECT_EQ(Shape(std::span<const int64_t>(v)), s);
}

TEST_P(ShapeSizes, EditsLikeAVector) {
  std::vector<int64_t> v = iota_vector(GetParam());
  Shape s(v);
  s.push_back(40);
  v.push_back(40);
  EXPECT_TRUE(same(s, v));
  s.insert(s.begin(), 7);
  v.insert(v.begin(), 7);
  EXPECT_TRUE(same(s, v));
  s.insert(s.begin() + 1, {8, 9});
  v.insert(v.begin() + 1, {8, 9});
  EXPECT_TRUE(same(s, v));
  s.insert(s.end(), s.begin(), s.begin() + 2);  // from itself
  v.insert(v.end(), v.begin(), v.begin() + 2);
  EXPECT_TRUE(same(s, v));
  s.erase(s.begin() + 1);
  v.erase(v.begin() + 1);
  EXPECT_TRUE(same(s, v));
  s.erase(s.begin(), s.begin() + 2);
  v.erase(v.begin(), v.begin() + 2);
  EXPECT_TRUE(same(s, v));
  s.resize(s.size() + 3, -1);
  v.resize(v.size() + 3, -1);
  EXPECT_TRUE(same(s, v));
  s.resize(1);
  v.resize(1);
  EXPECT_TRUE(same(s, v));
  s.pop_back();
  EXPECT_TRUE(s.empty());
}

INSTANTIATE_TEST_SUITE_P(InlineAndHeap, ShapeSizes, ::testing::Values(0, 1, 5, 6, 7, 40));

TEST(ShapeTest, CountConstructorAndListsAreVectorsOnes) {
  EXPECT_TRUE(same(Shape(3), {0, 0, 0}));
  EXPECT_TRUE(same(Shape(9, 2), std::vector<int64_t>(9, 2)));
  EXPECT_TRUE(same(Shape{3}, {3}));  // braces: the values
  EXPECT_TRUE(same(Shape{}, {}));
  Shape s{1, 2};
  s = {4, 5, 6, 7, 8, 9, 10};
  EXPECT_TRUE(same(s, {4, 5, 6, 7, 8, 9, 10}));
}

TEST(ShapeTest, OffersTheRestOfTheVectorsInterface) {
  Shape s{1, 2, 3};
  EXPECT_EQ(s.at(2), 3);
  EXPECT_THROW(static_cast<void>(s.at(3)), std::out_of_range);
  s.emplace_back(4) = 5;
  EXPECT_TRUE(same(s, {1, 2, 3, 5}));
  s.insert(s.begin() + 1, 4, 0);
  EXPECT_TRUE(same(s, {1, 0, 0, 0, 0, 2, 3, 5}));
  s.assign(2, 7);
  EXPECT_TRUE(same(s, {7, 7}));
  const std::vector<int64_t> v = iota_vector(9);
  s.assign(v.begin(), v.end());
  EXPECT_TRUE(same(s, v));
  s.assign({3});
  Shape other{8, 9};
  swap(s, other);
  EXPECT_TRUE(same(s, {8, 9}));
  EXPECT_TRUE(same(other, {3}));
  const std::vector<int64_t> as_vector = s;  // code from when Shape was a vector
  EXPECT_EQ(as_vector, (std::vector<int64_t>{8, 9}));
}

TEST(ShapeTest, ComparesAsVectorsDo) {
  EXPECT_EQ((Shape{2, 3}), (std::vector<int64_t>{2, 3}));
  EXPECT_NE((Shape{2, 3}), (Shape{2, 3, 1}));
  EXPECT_LT((Shape{2, 3}), (Shape{2, 4}));
  EXPECT_LT((Shape{2}), (Shape{2, 0}));
  EXPECT_EQ(Shape(iota_vector(10)), Shape(iota_vector(10)));
}

}  // namespace
}  // namespace meshsim::shape_test
