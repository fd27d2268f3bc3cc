#pragma once
// Element types. DType names the type at run time; visit_dtype turns it back
// into a C++ type. visit_dtype is the only place in meshsim that switches on a
// DType: code that needs per-type behaviour passes it a generic lambda.

#include <Eigen/Core>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>
#include <type_traits>

namespace meshsim {

// The C++ type of each DType: bool, int8_t, int32_t, int64_t, uint8_t,
// uint32_t, Eigen::half, Eigen::bfloat16, float, double.
enum class DType : uint8_t {
  kBool,
  kInt8,
  kInt32,
  kInt64,
  kUInt8,
  kUInt32,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};

inline constexpr std::array<DType, 10> kAllDTypes = {
    DType::kBool,   DType::kInt8,    DType::kInt32,    DType::kInt64,   DType::kUInt8,
    DType::kUInt32, DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};

// The numpy / JAX name: "bool", "int8", ..., "bfloat16", "float32".
// A value outside the enum gives "invalid".
std::string_view dtype_name(DType dtype);
// Inverse of dtype_name; also accepts the short forms "i8", "i32", "i64",
// "u8", "u32", "f16", "bf16", "f32", "f64". DTypeError lists the valid names.
DType parse_dtype(std::string_view name);
// float16, bfloat16, float32, float64.
bool is_floating(DType dtype);
// The integer types. bool is neither integral nor floating: reductions and
// casts treat it as a truth value, not as a number (psum of bool is int32).
bool is_integral(DType dtype);
// Whether negative values are representable: the signed integers and floats.
bool is_signed(DType dtype);
std::ostream& operator<<(std::ostream& os, DType dtype);

// The dtype both operands of a binary operation convert to: the least upper
// bound in JAX's type promotion lattice (jnp.promote_types, with
// jax_enable_x64, since meshsim has int64 and float64), restricted to the
// dtypes meshsim has. Symmetric. bool < any other dtype; u8 < u32 < i64,
// u8 < i32, i8 < i32 < i64; any integer < any float; bf16 and f16 < f32 <
// f64. Where JAX's answer is a dtype meshsim lacks, the next one up:
// int8 with uint8 is int32 (JAX: int16). Arrays are never weakly typed, so a
// rank-0 Array promotes like any other (JAX: jnp.array(1, int32), not 1).
DType promote_types(DType a, DType b);

// Compile-time counterparts of is_floating / is_integral, for use inside
// visit_dtype where only the C++ type is known.
template <class T>
inline constexpr bool kIsFloatingType = std::is_floating_point_v<T> ||
                                        std::is_same_v<T, Eigen::half> ||
                                        std::is_same_v<T, Eigen::bfloat16>;
template <class T>
inline constexpr bool kIsIntegralType = std::is_integral_v<T> && !std::is_same_v<T, bool>;

namespace detail {
template <DType D>
struct DTypeType;
template <> struct DTypeType<DType::kBool> { using type = bool; };
template <> struct DTypeType<DType::kInt8> { using type = int8_t; };
template <> struct DTypeType<DType::kInt32> { using type = int32_t; };
template <> struct DTypeType<DType::kInt64> { using type = int64_t; };
template <> struct DTypeType<DType::kUInt8> { using type = uint8_t; };
template <> struct DTypeType<DType::kUInt32> { using type = uint32_t; };
template <> struct DTypeType<DType::kFloat16> { using type = Eigen::half; };
template <> struct DTypeType<DType::kBFloat16> { using type = Eigen::bfloat16; };
template <> struct DTypeType<DType::kFloat32> { using type = float; };
template <> struct DTypeType<DType::kFloat64> { using type = double; };

template <class T>
inline constexpr bool kUnsupportedType = false;

// Out of line so that visit_dtype stays small enough to inline.
[[noreturn]] void throw_invalid_dtype(DType dtype);
}  // namespace detail

template <DType D>
using dtype_type_t = typename detail::DTypeType<D>::type;

// The DType of a C++ type; a type with no DType fails to compile. Exact:
// `long long`, `char` and cv-qualified types are not dtypes.
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::kInt8;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::kInt32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::kInt64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::kUInt8;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::kUInt32;
  else if constexpr (std::is_same_v<T, Eigen::half>) return DType::kFloat16;
  else if constexpr (std::is_same_v<T, Eigen::bfloat16>) return DType::kBFloat16;
  else if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  else static_assert(detail::kUnsupportedType<T>, "T is not a meshsim dtype");
}

// Calls f(std::type_identity<T>{}) with T = the C++ type of `dtype` and
// returns its result; every instantiation of f must return the same type.
// DTypeError if `dtype` is not one of the enumerators.
template <class F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBool: return f(std::type_identity<bool>{});
    case DType::kInt8: return f(std::type_identity<int8_t>{});
    case DType::kInt32: return f(std::type_identity<int32_t>{});
    case DType::kInt64: return f(std::type_identity<int64_t>{});
    case DType::kUInt8: return f(std::type_identity<uint8_t>{});
    case DType::kUInt32: return f(std::type_identity<uint32_t>{});
    case DType::kFloat16: return f(std::type_identity<Eigen::half>{});
    case DType::kBFloat16: return f(std::type_identity<Eigen::bfloat16>{});
    case DType::kFloat32: return f(std::type_identity<float>{});
    case DType::kFloat64: return f(std::type_identity<double>{});
  }
  detail::throw_invalid_dtype(dtype);
}

// Bytes per element. Inline (a table lookup once compiled): every collective
// asks it several times per call.
inline size_t dtype_size(DType dtype) {
  return visit_dtype(dtype, [](auto t) { return sizeof(typename decltype(t)::type); });
}

}  // namespace meshsim
