// Zero-size arrays through every collective (issue 9 item 5): each returns the
// JAX-shaped empty result, without touching a null pointer (memcpy(nullptr,
// ..., 0) is undefined; the ASan + UBSan build runs these too).

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"

namespace meshsim::empty_arrays_test {
namespace {

struct EmptyCase {
  std::string name;
  Shape input;
  std::function<Array(DeviceContext&, const Array&)> op;
  Shape expected;
  DType expected_dtype = DType::kFloat32;
};

void PrintTo(const EmptyCase& c, std::ostream* os) { *os << c.name; }

Array i32(std::vector<int32_t> values) {
  const Shape shape = {static_cast<int64_t>(values.size())};
  return Array::from_values<int32_t>(shape, std::span<const int32_t>(values));
}

std::vector<EmptyCase> cases() {
  using Ctx = DeviceContext;
  using A = const Array&;
  return {
      {"Psum", {0, 3}, [](Ctx& c, A x) { return psum(c, x, "x"); }, {0, 3}},
      {"Pmax", {0, 3}, [](Ctx& c, A x) { return pmax(c, x, "x"); }, {0, 3}},
      {"Pmin", {3, 0}, [](Ctx& c, A x) { return pmin(c, x, "x"); }, {3, 0}},
      {"Pmean", {0}, [](Ctx& c, A x) { return pmean(c, x, "x"); }, {0}},
      {"PsumGroups", {0}, [](Ctx& c, A x) { return psum(c, x, "x", {{0, 1}, {2, 3}}); }, {0}},
      {"Pargmax", {0, 2}, [](Ctx& c, A x) { return pargmax(c, x, "x"); }, {0, 2}, DType::kInt32},
      {"Pargmin", {0}, [](Ctx& c, A x) { return pargmin(c, x, "x"); }, {0}, DType::kInt32},
      {"AllGatherStacked", {0, 3}, [](Ctx& c, A x) { return all_gather(c, x, "x"); }, {4, 0, 3}},
      {"AllGatherTiled",
       {2, 0},
       [](Ctx& c, A x) { return all_gather(c, x, "x", {.axis = 0, .tiled = true}); },
       {8, 0}},
      {"PsumScatter", {4, 0}, [](Ctx& c, A x) { return psum_scatter(c, x, "x"); }, {0}},
      {"PsumScatterTiled",
       {0, 8},
       [](Ctx& c, A x) { return psum_scatter(c, x, "x", {.scatter_dimension = 1, .tiled = true}); },
       {0, 2}},
      {"AllToAll", {4, 0}, [](Ctx& c, A x) { return all_to_all(c, x, "x", 0, 1); }, {0, 4}},
      {"AllToAllTiled",
       {0, 8},
       [](Ctx& c, A x) { return all_to_all(c, x, "x", 1, 0, {.tiled = true}); },
       {0, 2}},
      {"Pswapaxes", {4, 0}, [](Ctx& c, A x) { return pswapaxes(c, x, "x", 0); }, {4, 0}},
      {"Ppermute",
       {0, 3},
       [](Ctx& c, A x) { return ppermute(c, x, "x", {{0, 1}, {1, 0}}); },
       {0, 3}},
      {"Pshuffle", {0}, [](Ctx& c, A x) { return pshuffle(c, x, "x", {3, 2, 1, 0}); }, {0}},
      {"Pbroadcast", {0, 3}, [](Ctx& c, A x) { return pbroadcast(c, x, "x", 1); }, {0, 3}},
      {"RaggedAllToAll",
       {0, 3},
       [](Ctx& c, A x) {
         const Array zeros = i32({0, 0, 0, 0});
         return ragged_all_to_all(c, x, Array::zeros({0, 3}, DType::kFloat32), zeros, zeros,
                                  zeros, zeros, "x");
       },
       {0, 3}},
      {"PsendPrecv",
       {0, 3},
       [](Ctx& c, A x) {
         const Token t = psend(c, x, "x", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
         return precv(c, t, {0, 3}, DType::kFloat32, "x", {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
       },
       {0, 3}},
  };
}

class EmptyArrayTest : public ::testing::TestWithParam<EmptyCase> {};

TEST_P(EmptyArrayTest, ReturnsTheEmptyResultShape) {
  const EmptyCase& c = GetParam();
  Runtime rt(4);
  std::vector<Array> out(4);
  rt.launch(Mesh::make({{"x", 4}}), [&](DeviceContext& ctx) {
    out[ctx.position()] = c.op(ctx, Array::zeros(c.input, DType::kFloat32));
  });
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(out[p].shape(), c.expected) << p << ": " << shape_to_string(out[p].shape());
    EXPECT_EQ(out[p].dtype(), c.expected_dtype) << p;
    EXPECT_EQ(out[p].size(), 0) << p;
  }
}

INSTANTIATE_TEST_SUITE_P(Collectives, EmptyArrayTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace meshsim::empty_arrays_test
