#include "meshsim/runtime/array/dtype.h"

#include <limits>
#include <ostream>
#include <string>
#include <utility>

#include "meshsim/mesh/error.h"

namespace meshsim {
namespace {

// Indexed by the enumerator's value.
constexpr std::array<std::string_view, kAllDTypes.size()> kNames = {
    "bool",   "int8",    "int32",    "int64",   "uint8",
    "uint32", "float16", "bfloat16", "float32", "float64"};

constexpr std::pair<std::string_view, DType> kShortNames[] = {
    {"i8", DType::kInt8},       {"i32", DType::kInt32},      {"i64", DType::kInt64},
    {"u8", DType::kUInt8},      {"u32", DType::kUInt32},     {"f16", DType::kFloat16},
    {"bf16", DType::kBFloat16}, {"f32", DType::kFloat32},    {"f64", DType::kFloat64}};

// Bit d set: dtype d. Each dtype's upper bounds in JAX's promotion lattice
// (itself included), restricted to meshsim's dtypes.
constexpr uint32_t bit(DType dtype) { return uint32_t{1} << static_cast<int>(dtype); }
constexpr uint32_t kFloatsAbove16 = bit(DType::kFloat32) | bit(DType::kFloat64);
constexpr uint32_t kFloats = bit(DType::kFloat16) | bit(DType::kBFloat16) | kFloatsAbove16;
constexpr uint32_t kAboveInt64 = bit(DType::kInt64) | kFloats;
constexpr uint32_t kAboveInt32 = bit(DType::kInt32) | kAboveInt64;
constexpr uint32_t kAboveUInt32 = bit(DType::kUInt32) | kAboveInt64;
constexpr std::array<uint32_t, kAllDTypes.size()> kUpperBounds = {
    /*bool*/ (uint32_t{1} << kAllDTypes.size()) - 1,
    /*int8*/ bit(DType::kInt8) | kAboveInt32,
    /*int32*/ kAboveInt32,
    /*int64*/ kAboveInt64,
    /*uint8*/ bit(DType::kUInt8) | kAboveUInt32 | kAboveInt32,
    /*uint32*/ kAboveUInt32,
    /*float16*/ bit(DType::kFloat16) | kFloatsAbove16,
    /*bfloat16*/ bit(DType::kBFloat16) | kFloatsAbove16,
    /*float32*/ kFloatsAbove16,
    /*float64*/ bit(DType::kFloat64)};

}  // namespace

namespace detail {
void throw_invalid_dtype(DType dtype) {
  throw DTypeError("invalid dtype value " + std::to_string(static_cast<int>(dtype)));
}
}  // namespace detail

std::string_view dtype_name(DType dtype) {
  const auto index = static_cast<size_t>(dtype);
  return index < kNames.size() ? kNames[index] : "invalid";
}

DType parse_dtype(std::string_view name) {
  for (DType dtype : kAllDTypes) {
    if (dtype_name(dtype) == name) return dtype;
  }
  for (const auto& [short_name, dtype] : kShortNames) {
    if (short_name == name) return dtype;
  }
  std::string valid;
  auto append = [&valid](std::string_view valid_name) {
    if (!valid.empty()) valid += ", ";
    valid += valid_name;
  };
  for (DType dtype : kAllDTypes) append(dtype_name(dtype));
  for (const auto& entry : kShortNames) append(entry.first);
  throw DTypeError("unknown dtype '" + std::string(name) + "'; valid names: " + valid);
}

bool is_floating(DType dtype) {
  return visit_dtype(dtype, [](auto t) { return kIsFloatingType<typename decltype(t)::type>; });
}

bool is_integral(DType dtype) {
  return visit_dtype(dtype, [](auto t) { return kIsIntegralType<typename decltype(t)::type>; });
}

bool is_signed(DType dtype) {
  return visit_dtype(dtype, [](auto t) {
    return std::numeric_limits<typename decltype(t)::type>::is_signed;
  });
}

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << dtype_name(dtype); }

DType promote_types(DType a, DType b) {
  // DTypeError for a value outside the enum.
  static_cast<void>(dtype_size(a));
  static_cast<void>(dtype_size(b));
  // The least common upper bound: the one whose own upper bounds hold all.
  const uint32_t common =
      kUpperBounds[static_cast<size_t>(a)] & kUpperBounds[static_cast<size_t>(b)];
  for (DType candidate : kAllDTypes) {
    const uint32_t above = kUpperBounds[static_cast<size_t>(candidate)];
    if ((common & bit(candidate)) != 0 && (above & common) == common) return candidate;
  }
  detail::throw_invalid_dtype(a);  // unreachable: the lattice has a join
}

}  // namespace meshsim
