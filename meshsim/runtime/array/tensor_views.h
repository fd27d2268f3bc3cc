#pragma once
// Eigen TensorMap views of an Array of any rank, for local math on shards.
// Not in meshsim.h: the Eigen Tensor module is heavy to compile. The rules of
// array_views.h hold (aliasing, copy-on-write, dtype and rank checks).

#include <unsupported/Eigen/CXX11/Tensor>

#include "meshsim/runtime/array/array_views.h"

namespace meshsim {

// TensorMap only knows one alignment flag (16 bytes), implied by 64.
template <class T, int Rank>
using TensorView = Eigen::TensorMap<const Eigen::Tensor<T, Rank, Eigen::RowMajor>, Eigen::Aligned>;
template <class T, int Rank>
using MutableTensorView = Eigen::TensorMap<Eigen::Tensor<T, Rank, Eigen::RowMajor>, Eigen::Aligned>;

namespace detail {

template <int Rank>
Eigen::DSizes<Eigen::Index, Rank> tensor_dims(const Array& array) {
  Eigen::DSizes<Eigen::Index, Rank> dims;
  for (int d = 0; d < Rank; ++d) dims[d] = array.dim(d);
  return dims;
}

}  // namespace detail

template <class T, int Rank>
TensorView<T, Rank> tensor_view(const Array& array) {
  detail::check_view_rank(array, Rank, "tensor_view");
  return TensorView<T, Rank>(array.span<T>().data(), detail::tensor_dims<Rank>(array));
}

template <class T, int Rank>
MutableTensorView<T, Rank> mutable_tensor_view(Array& array) {
  detail::check_view_rank(array, Rank, "mutable_tensor_view");
  return MutableTensorView<T, Rank>(array.mutable_span<T>().data(),
                                    detail::tensor_dims<Rank>(array));
}

}  // namespace meshsim
