// Every collective publishes its caller's own dtype (issue 9 item 9): members
// that call it with float32 and bfloat16 get CollectiveMismatchError, even
// where the implementation converts (pmean reduces bfloat16 in float32).

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"
#include "support/expect_error.h"

namespace meshsim::caller_dtype_test {
namespace {

struct DtypeCase {
  std::string name;
  std::function<void(DeviceContext&, const Array&)> op;
};

void PrintTo(const DtypeCase& c, std::ostream* os) { *os << c.name; }

std::vector<DtypeCase> cases() {
  using Ctx = DeviceContext;
  using A = const Array&;
  return {
      {"Psum", [](Ctx& c, A x) { psum(c, x, "x"); }},
      {"Pmax", [](Ctx& c, A x) { pmax(c, x, "x"); }},
      {"Pmin", [](Ctx& c, A x) { pmin(c, x, "x"); }},
      {"Pmean", [](Ctx& c, A x) { pmean(c, x, "x"); }},
      {"Pargmax", [](Ctx& c, A x) { pargmax(c, x, "x"); }},
      {"Pargmin", [](Ctx& c, A x) { pargmin(c, x, "x"); }},
      {"AllGather", [](Ctx& c, A x) { all_gather(c, x, "x"); }},
      {"PsumScatter", [](Ctx& c, A x) { psum_scatter(c, x, "x"); }},
      {"AllToAll", [](Ctx& c, A x) { all_to_all(c, x, "x", 0, 0); }},
      {"Pswapaxes", [](Ctx& c, A x) { pswapaxes(c, x, "x", 0); }},
      {"Ppermute", [](Ctx& c, A x) { ppermute(c, x, "x", {{0, 1}}); }},
      {"Pshuffle", [](Ctx& c, A x) { pshuffle(c, x, "x", {1, 2, 3, 0}); }},
      {"Pbroadcast", [](Ctx& c, A x) { pbroadcast(c, x, "x", 0); }},
      {"RaggedAllToAll",
       [](Ctx& c, A x) {
         const Array zeros = Array::zeros({4}, DType::kInt32);
         ragged_all_to_all(c, x, Array::zeros({4}, x.dtype()), zeros, zeros, zeros, zeros, "x");
       }},
  };
}

class CallerDtypeTest : public ::testing::TestWithParam<DtypeCase> {};

TEST_P(CallerDtypeTest, Float32AgainstBfloat16IsAMismatch) {
  Runtime rt(4);
  EXPECT_ERROR(rt.launch(Mesh::make({{"x", 4}}),
                         [&](DeviceContext& ctx) {
                           const DType dtype =
                               ctx.position() == 3 ? DType::kBFloat16 : DType::kFloat32;
                           GetParam().op(ctx, Array::zeros({4}, dtype));
                         }),
               CollectiveMismatchError, "bfloat16(4)");
}

INSTANTIATE_TEST_SUITE_P(Collectives, CallerDtypeTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace meshsim::caller_dtype_test
