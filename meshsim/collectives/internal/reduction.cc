#include "meshsim/collectives/internal/reduction.h"

#include <algorithm>
#include <type_traits>

#include "meshsim/mesh/error.h"

namespace meshsim {
namespace {

// Elements per block: the accumulator block stays in L1 across all inputs.
constexpr int64_t kBlock = 2048;

template <class T>
struct Accumulation {
  // The type the running value is kept in, and the type arithmetic runs in.
  using Acc = std::conditional_t<std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>,
                                 float, T>;
};
template <>
struct Accumulation<bool> {
  using Acc = int32_t;
};

template <class T>
using AccOf = typename Accumulation<T>::Acc;

template <class A>
inline A combine(ReduceOp op, A a, A b) {
  if constexpr (std::is_integral_v<A> && std::is_signed_v<A>) {
    if (op == ReduceOp::kSum) {  // wraps like XLA; signed overflow would be UB
      using U = std::make_unsigned_t<A>;
      return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
    }
  }
  if constexpr (std::is_floating_point_v<A>) {
    // max / min propagate NaN, as XLA does, whichever rank holds it.
    if (op != ReduceOp::kSum && (a != a || b != b)) return a != a ? a : b;
  }
  switch (op) {
    case ReduceOp::kSum: return static_cast<A>(a + b);
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
  }
  return a;
}

// One loop per op so the compiler vectorizes each.
template <class A, class T>
void accumulate(ReduceOp op, A* acc, const T* in, int64_t n) {
  switch (op) {
    case ReduceOp::kSum:
      for (int64_t i = 0; i < n; ++i) acc[i] = combine(ReduceOp::kSum, acc[i], static_cast<A>(in[i]));
      break;
    case ReduceOp::kMax:
      for (int64_t i = 0; i < n; ++i) acc[i] = combine(ReduceOp::kMax, acc[i], static_cast<A>(in[i]));
      break;
    case ReduceOp::kMin:
      for (int64_t i = 0; i < n; ++i) acc[i] = combine(ReduceOp::kMin, acc[i], static_cast<A>(in[i]));
      break;
  }
}

// A few elements from a few inputs (a small psum in a small group): one pass
// per element over the inputs, in rank order as below, without the per-input
// loop set-up, which costs more than the arithmetic here.
constexpr int64_t kFewElements = 16;
constexpr int kFewInputs = 8;

template <class T>
void reduce_few(ReduceOp op, int num_inputs, FunctionRef<const void*(int)> input, void* out_raw,
                int64_t count) {
  using A = AccOf<T>;
  const T* in[kFewInputs];
  for (int r = 0; r < num_inputs; ++r) in[r] = static_cast<const T*>(input(r));
  for (int64_t i = 0; i < count; ++i) {
    A acc = static_cast<A>(in[0][i]);
    for (int r = 1; r < num_inputs; ++r) acc = combine(op, acc, static_cast<A>(in[r][i]));
    if constexpr (std::is_same_v<T, bool>) {
      if (op == ReduceOp::kSum) {
        static_cast<int32_t*>(out_raw)[i] = acc;
      } else {
        static_cast<bool*>(out_raw)[i] = acc != 0;
      }
    } else {
      static_cast<T*>(out_raw)[i] = static_cast<T>(acc);
    }
  }
}

template <class T>
void reduce_typed(ReduceOp op, int num_inputs, FunctionRef<const void*(int)> input, void* out_raw,
                  int64_t count) {
  if (count <= kFewElements && num_inputs <= kFewInputs) {
    return reduce_few<T>(op, num_inputs, input, out_raw, count);
  }
  using A = AccOf<T>;
  // A bool max / min stays bool (or / and); only a bool sum widens.
  constexpr bool kBool = std::is_same_v<T, bool>;
  const auto in = [&](int r) { return static_cast<const T*>(input(r)); };
  if constexpr (std::is_same_v<A, T>) {
    T* out = static_cast<T*>(out_raw);
    for (int64_t begin = 0; begin < count; begin += kBlock) {
      const int64_t n = std::min(kBlock, count - begin);
      if (out != in(0)) std::copy_n(in(0) + begin, n, out + begin);
      for (int r = 1; r < num_inputs; ++r) accumulate(op, out + begin, in(r) + begin, n);
    }
  } else {
    A acc[kBlock];
    for (int64_t begin = 0; begin < count; begin += kBlock) {
      const int64_t n = std::min(kBlock, count - begin);
      for (int64_t i = 0; i < n; ++i) acc[i] = static_cast<A>(in(0)[begin + i]);
      for (int r = 1; r < num_inputs; ++r) accumulate(op, acc, in(r) + begin, n);
      if (kBool && op != ReduceOp::kSum) {
        bool* out = static_cast<bool*>(out_raw) + begin;
        for (int64_t i = 0; i < n; ++i) out[i] = acc[i] != 0;
      } else if constexpr (kBool) {
        std::copy_n(acc, n, static_cast<int32_t*>(out_raw) + begin);
      } else {
        T* out = static_cast<T*>(out_raw) + begin;
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(acc[i]);
      }
    }
  }
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

DType reduce_output_dtype(ReduceOp op, DType input) {
  return input == DType::kBool && op == ReduceOp::kSum ? DType::kInt32 : input;
}

void reduce_into(ReduceOp op, DType dtype, int num_inputs, FunctionRef<const void*(int)> input,
                 void* out, int64_t count) {
  if (num_inputs < 1) throw InvalidArgumentError("reduce_into needs at least one input");
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_typed<T>(op, num_inputs, input, out, count);
  });
}

}  // namespace meshsim
