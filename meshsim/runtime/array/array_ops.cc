#include "meshsim/runtime/array/array_ops.h"

#include <string>
#include <type_traits>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/array_shape_ops.h"
#include "meshsim/runtime/array/array_views.h"

namespace meshsim {
namespace {

enum class Op { kAdd, kSubtract, kMultiply, kDivide };

constexpr const char* op_name(Op op) {
  switch (op) {
    case Op::kAdd: return "add";
    case Op::kSubtract: return "subtract";
    case Op::kMultiply: return "multiply";
    case Op::kDivide: return "divide";
  }
  return "?";
}

// The type Eigen computes in: an integer's unsigned twin (it may alias the
// signed storage, and its arithmetic wraps where signed overflow is
// undefined), any other type itself.
template <class T>
using ComputeType =
    typename std::conditional_t<kIsIntegralType<T>, std::make_unsigned<T>,
                                std::type_identity<T>>::type;

template <class T>
void apply(Op op, const Array& x, const Array& y, Array& out) {
  using C = ComputeType<T>;
  using Vector = Eigen::Array<C, Eigen::Dynamic, 1>;
  const auto n = static_cast<Eigen::Index>(out.size());
  const Eigen::Map<const Vector, Eigen::Aligned64> a(reinterpret_cast<const C*>(x.bytes()), n);
  const Eigen::Map<const Vector, Eigen::Aligned64> b(reinterpret_cast<const C*>(y.bytes()), n);
  Eigen::Map<Vector, Eigen::Aligned64> result(reinterpret_cast<C*>(out.mutable_bytes()), n);
  if constexpr (std::is_same_v<T, bool>) {
    if (op == Op::kAdd) result = a || b;
    if (op == Op::kMultiply) result = a && b;
  } else {
    switch (op) {
      case Op::kAdd: result = a + b; break;
      case Op::kSubtract: result = a - b; break;
      case Op::kMultiply: result = a * b; break;
      case Op::kDivide: result = a / b; break;
    }
  }
}

Array elementwise(Op op, const Array& a, const Array& b) {
  DType dtype = promote_types(a.dtype(), b.dtype());
  if (op == Op::kDivide && !is_floating(dtype)) dtype = DType::kFloat64;
  if (op == Op::kSubtract && dtype == DType::kBool) {
    throw DTypeError("subtract of two bool arrays (shapes " + shape_to_string(a.shape()) +
                     " and " + shape_to_string(b.shape()) +
                     "): JAX has no boolean subtract; use astype first");
  }
  Shape shape;
  try {
    shape = broadcast_shapes(a.shape(), b.shape());
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(op_name(op)) + ": " + e.message());
  }
  const Array x = broadcast_to(a.astype(dtype), shape);
  const Array y = broadcast_to(b.astype(dtype), shape);
  Array out = Array::empty(shape, dtype);
  if (out.size() == 0) return out;
  visit_dtype(dtype, [&](auto t) { apply<typename decltype(t)::type>(op, x, y, out); });
  return out;
}

}  // namespace

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  Shape out = longer;
  const size_t lead = longer.size() - shorter.size();
  for (size_t d = 0; d < shorter.size(); ++d) {
    const int64_t x = longer[lead + d], y = shorter[d];
    if (x != y && x != 1 && y != 1) {
      throw ShapeError("shapes " + shape_to_string(a) + " and " + shape_to_string(b) +
                       " do not broadcast");
    }
    out[lead + d] = x == 1 ? y : x;
  }
  return out;
}

Array operator+(const Array& a, const Array& b) { return elementwise(Op::kAdd, a, b); }
Array operator-(const Array& a, const Array& b) { return elementwise(Op::kSubtract, a, b); }
Array operator*(const Array& a, const Array& b) { return elementwise(Op::kMultiply, a, b); }
Array operator/(const Array& a, const Array& b) { return elementwise(Op::kDivide, a, b); }

}  // namespace meshsim
