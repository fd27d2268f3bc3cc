#include "meshsim/collectives/argreduce.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/collectives/internal/reduction.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/internal/function_ref.h"

namespace meshsim {
namespace {

// Whether `candidate`, held by a later rank, takes the place of `best`.
template <class T>
bool replaces(ReduceOp op, T candidate, T best) {
  if constexpr (kIsFloatingType<T>) {
    if (Eigen::numext::isnan(best)) return false;
    if (Eigen::numext::isnan(candidate)) return true;
  }
  return op == ReduceOp::kMax ? best < candidate : candidate < best;
}

// out[i] = the first r in [0, n) whose input(r)[i] is the max (min) of
// input(0..n-1)[i].
void arg_reduce_into(ReduceOp op, DType dtype, int n, FunctionRef<const void*(int)> input,
                     int32_t* out, int64_t count) {
  visit_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int64_t kBlock = 1024;  // the best values stay in L1 across inputs
    T best[kBlock];
    for (int64_t begin = 0; begin < count; begin += kBlock) {
      const int64_t len = std::min(kBlock, count - begin);
      std::copy_n(static_cast<const T*>(input(0)) + begin, len, best);
      std::fill_n(out + begin, len, 0);
      for (int r = 1; r < n; ++r) {
        const T* in = static_cast<const T*>(input(r)) + begin;
        for (int64_t i = 0; i < len; ++i) {
          if (replaces(op, in[i], best[i])) {
            best[i] = in[i];
            out[begin + i] = r;
          }
        }
      }
    }
  });
}

// The direct arg-reduction over one axis (rank = axis index).
// Words: n = axis size, S = bytes of x. Every member's output is the same.
// Small (n·S <= Meeting::kLeaderBytes): the last member to arrive scans all inputs in
//   place into its output and copies that to every peer before it releases
//   the group. 1 barrier; the leader reads n·S bytes.
// Large: after the meeting each member scans all n inputs, read in place,
//   into its own output, then meets again (departure) so that no input is
//   released while a peer still reads it. 2 barriers; each member reads n·S
//   bytes.
Array arg_reduce(DeviceContext& ctx, const char* op_name, ReduceOp op, const Array& x,
                 const AxisNames& axis) {
  if (axis.size() != 1) {
    throw InvalidArgumentError(std::string(op_name) + " only accepts a single axis, got " +
                               axis.to_string());
  }
  Meeting meeting(ctx, axis, {}, op_name);
  const int n = meeting.size();
  Array out = Array::empty_like(x, DType::kInt32);
  std::byte* const out_bytes = out.mutable_bytes();
  const CollectiveCall call(op_name, x.dtype(), x.shape());
  meeting.publish(call, x.bytes(), out_bytes);
  // Every member scans all inputs into its own output: the same bits
  // everywhere, as each scan runs in rank order.
  meeting.run_direct(x.nbytes(), static_cast<size_t>(n) * x.nbytes(), [&](int, void* output) {
    arg_reduce_into(op, x.dtype(), n, [&](int r) { return meeting.input(r); },
                    static_cast<int32_t*>(output), x.size());
  });
  meeting.price_all_to_all(static_cast<int64_t>(x.nbytes()));
  return out;
}

}  // namespace

Array pargmax(DeviceContext& ctx, const Array& x, const AxisNames& axis) {
  return arg_reduce(ctx, "pargmax", ReduceOp::kMax, x, axis);
}

Array pargmin(DeviceContext& ctx, const Array& x, const AxisNames& axis) {
  return arg_reduce(ctx, "pargmin", ReduceOp::kMin, x, axis);
}

}  // namespace meshsim
