#include "meshsim/runtime/array/dtype.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::dtype_test {
namespace {

struct DTypeFacts {
  DType dtype;
  std::string_view name;
  size_t size;
  bool floating;
  bool integral;
  bool is_signed;
};

void PrintTo(const DTypeFacts& facts, std::ostream* os) { *os << facts.name; }

constexpr DTypeFacts kFacts[] = {
    {DType::kBool, "bool", 1, false, false, false},
    {DType::kInt8, "int8", 1, false, true, true},
    {DType::kInt32, "int32", 4, false, true, true},
    {DType::kInt64, "int64", 8, false, true, true},
    {DType::kUInt8, "uint8", 1, false, true, false},
    {DType::kUInt32, "uint32", 4, false, true, false},
    {DType::kFloat16, "float16", 2, true, false, true},
    {DType::kBFloat16, "bfloat16", 2, true, false, true},
    {DType::kFloat32, "float32", 4, true, false, true},
    {DType::kFloat64, "float64", 8, true, false, true},
};
static_assert(std::size(kFacts) == kAllDTypes.size());

class DTypeFactsTest : public ::testing::TestWithParam<DTypeFacts> {};

TEST_P(DTypeFactsTest, NameSizeAndKind) {
  const DTypeFacts& facts = GetParam();
  EXPECT_EQ(dtype_name(facts.dtype), facts.name);
  EXPECT_EQ(dtype_size(facts.dtype), facts.size);
  EXPECT_EQ(is_floating(facts.dtype), facts.floating);
  EXPECT_EQ(is_integral(facts.dtype), facts.integral);
  EXPECT_EQ(is_signed(facts.dtype), facts.is_signed);
}

TEST_P(DTypeFactsTest, NameRoundTripsThroughParseAndStream) {
  const DTypeFacts& facts = GetParam();
  EXPECT_EQ(parse_dtype(facts.name), facts.dtype);
  std::ostringstream os;
  os << facts.dtype;
  EXPECT_EQ(os.str(), facts.name);
}

TEST_P(DTypeFactsTest, VisitDispatchesToTheMatchingType) {
  const DType dtype = GetParam().dtype;
  const auto [visited, size] = visit_dtype(dtype, [](auto t) {
    using T = typename decltype(t)::type;
    return std::pair(dtype_of<T>(), sizeof(T));
  });
  EXPECT_EQ(visited, dtype);
  EXPECT_EQ(size, GetParam().size);
}

INSTANTIATE_TEST_SUITE_P(AllDTypes, DTypeFactsTest, ::testing::ValuesIn(kFacts),
                         [](const auto& info) { return std::string(info.param.name); });

// dtype_of and dtype_type_t are inverse.
static_assert(dtype_of<bool>() == DType::kBool);
static_assert(dtype_of<Eigen::bfloat16>() == DType::kBFloat16);
static_assert(dtype_of<uint32_t>() == DType::kUInt32);
static_assert(std::is_same_v<dtype_type_t<DType::kFloat16>, Eigen::half>);
static_assert(std::is_same_v<dtype_type_t<DType::kInt64>, int64_t>);
static_assert(std::is_same_v<dtype_type_t<dtype_of<int8_t>()>, int8_t>);

TEST(DTypeTest, VisitReturnsReferences) {
  int calls = 0;
  int& result = visit_dtype(DType::kInt32, [&](auto) -> int& {
    ++calls;
    return calls;
  });
  EXPECT_EQ(&result, &calls);
  EXPECT_EQ(calls, 1);
}

TEST(DTypeTest, ParseAcceptsShortNames) {
  EXPECT_EQ(parse_dtype("bf16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("f16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("f32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("f64"), DType::kFloat64);
  EXPECT_EQ(parse_dtype("i32"), DType::kInt32);
  EXPECT_EQ(parse_dtype("u8"), DType::kUInt8);
}

TEST(DTypeTest, ParseOfUnknownNameListsValidNames) {
  EXPECT_ERROR(parse_dtype("float8"), DTypeError,
               "unknown dtype 'float8'; valid names: bool, int8, int32, int64, uint8, uint32, "
               "float16, bfloat16, float32, float64, i8");
}

TEST(DTypeTest, InvalidEnumValueIsAnError) {
  const auto invalid = static_cast<DType>(42);
  EXPECT_EQ(dtype_name(invalid), "invalid");
  EXPECT_ERROR(dtype_size(invalid), DTypeError, "invalid dtype value 42");
}

// JAX's promotion table (jnp.promote_types with jax_enable_x64) restricted to
// meshsim's dtypes, in enum order: bool i8 i32 i64 u8 u32 f16 bf16 f32 f64.
// The two entries marked * are int16 in JAX, which meshsim lacks.
TEST(DTypeTest, PromoteTypesFollowsJaxTable) {
  constexpr DType b = DType::kBool, i8 = DType::kInt8, i32 = DType::kInt32, i64 = DType::kInt64,
                  u8 = DType::kUInt8, u32 = DType::kUInt32, f16 = DType::kFloat16,
                  bf16 = DType::kBFloat16, f32 = DType::kFloat32, f64 = DType::kFloat64;
  constexpr DType kTable[10][10] = {
      /*bool*/ {b, i8, i32, i64, u8, u32, f16, bf16, f32, f64},
      /*i8*/ {i8, i8, i32, i64, i32 /*JAX i16*/, i64, f16, bf16, f32, f64},
      /*i32*/ {i32, i32, i32, i64, i32, i64, f16, bf16, f32, f64},
      /*i64*/ {i64, i64, i64, i64, i64, i64, f16, bf16, f32, f64},
      /*u8*/ {u8, i32 /*JAX i16*/, i32, i64, u8, u32, f16, bf16, f32, f64},
      /*u32*/ {u32, i64, i64, i64, u32, u32, f16, bf16, f32, f64},
      /*f16*/ {f16, f16, f16, f16, f16, f16, f16, f32, f32, f64},
      /*bf16*/ {bf16, bf16, bf16, bf16, bf16, bf16, f32, bf16, f32, f64},
      /*f32*/ {f32, f32, f32, f32, f32, f32, f32, f32, f32, f64},
      /*f64*/ {f64, f64, f64, f64, f64, f64, f64, f64, f64, f64},
  };
  for (size_t i = 0; i < kAllDTypes.size(); ++i) {
    for (size_t j = 0; j < kAllDTypes.size(); ++j) {
      EXPECT_EQ(promote_types(kAllDTypes[i], kAllDTypes[j]), kTable[i][j])
          << kAllDTypes[i] << " with " << kAllDTypes[j];
    }
  }
  EXPECT_ERROR(promote_types(static_cast<DType>(42), DType::kInt8), DTypeError,
               "invalid dtype value 42");
}

}  // namespace
}  // namespace meshsim::dtype_test
