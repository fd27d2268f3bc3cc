#include "meshsim/collectives/reductions.h"

#include "meshsim/collectives/internal/all_reduce.h"
#include "meshsim/collectives/internal/axis_checks.h"

namespace meshsim {
namespace {

template <class T>
void divide_in_place(Array& a, int n) {
  for (T& v : a.mutable_span<T>()) v /= static_cast<T>(n);
}

}  // namespace

Array psum(DeviceContext& ctx, const Array& x, const AxisNames& axes,
           const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  return detail::all_reduce(ctx, "psum", ReduceOp::kSum, x, axes, axis_index_groups,
                             x.dtype(), algorithm);
}

Array pmax(DeviceContext& ctx, const Array& x, const AxisNames& axes,
           const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  return detail::all_reduce(ctx, "pmax", ReduceOp::kMax, x, axes, axis_index_groups,
                             x.dtype(), algorithm);
}

Array pmin(DeviceContext& ctx, const Array& x, const AxisNames& axes,
           const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  return detail::all_reduce(ctx, "pmin", ReduceOp::kMin, x, axes, axis_index_groups,
                             x.dtype(), algorithm);
}

Array pmean(DeviceContext& ctx, const Array& x, const AxisNames& axes,
            const AxisIndexGroups& axis_index_groups, std::string_view algorithm) {
  const int n = detail::group_for(ctx, axes, axis_index_groups, "pmean").rendezvous->size();
  const bool half = x.dtype() == DType::kFloat16 || x.dtype() == DType::kBFloat16;
  Array sum = detail::all_reduce(ctx, "pmean", ReduceOp::kSum,
                                 half ? x.astype(DType::kFloat32) : x, axes, axis_index_groups,
                                 x.dtype(), algorithm);
  if (!is_floating(sum.dtype())) sum = sum.astype(DType::kFloat32);
  if (sum.dtype() == DType::kFloat64) {
    divide_in_place<double>(sum, n);
  } else {
    divide_in_place<float>(sum, n);
  }
  return half ? sum.astype(x.dtype()) : sum;
}

}  // namespace meshsim
