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

size_t dtype_size(DType dtype) {
  return visit_dtype(dtype, [](auto t) { return sizeof(typename decltype(t)::type); });
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

}  // namespace meshsim
