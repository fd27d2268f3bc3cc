#pragma once
// Eigen matrix and vector views of an Array, for local math on shards
// (N-d TensorMap views are in tensor_views.h: the Eigen Tensor module costs
// every file that includes it a quarter of a second, so meshsim.h leaves it
// out).
//
// A view aliases the Array's storage: it is valid while that storage lives and
// the Array is not reassigned. A mutable view is taken after copy-on-write, so
// it writes only to this Array; like mutable_span, it is safe to write through
// only until the Array is next copied. Every view checks the dtype
// (DTypeError) and the rank it needs (ShapeError), naming the array's.

#include <Eigen/Core>

#include <string>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/array.h"

namespace meshsim {

template <class T>
using RowMatrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
// Array storage is 64-byte aligned, so the maps say so and Eigen may use
// aligned loads.
template <class T>
using MatrixView = Eigen::Map<const RowMatrix<T>, Eigen::Aligned64>;
template <class T>
using MutableMatrixView = Eigen::Map<RowMatrix<T>, Eigen::Aligned64>;
template <class T>
using VectorView = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Aligned64>;
template <class T>
using MutableVectorView = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>, Eigen::Aligned64>;
namespace detail {
inline void check_view_rank(const Array& array, int rank, const char* view) {
  if (array.rank() != rank) {
    throw ShapeError(std::string(view) + " needs rank " + std::to_string(rank) +
                     ", got an array of shape " + shape_to_string(array.shape()));
  }
}

}  // namespace detail

template <class T>
MatrixView<T> matrix_view(const Array& array) {
  detail::check_view_rank(array, 2, "matrix_view");
  return MatrixView<T>(array.span<T>().data(), array.dim(0), array.dim(1));
}

template <class T>
MutableMatrixView<T> mutable_matrix_view(Array& array) {
  detail::check_view_rank(array, 2, "mutable_matrix_view");
  return MutableMatrixView<T>(array.mutable_span<T>().data(), array.dim(0), array.dim(1));
}

// All elements in row-major order, whatever the rank: for elementwise math.
template <class T>
VectorView<T> vector_view(const Array& array) {
  return VectorView<T>(array.span<T>().data(), array.size());
}

template <class T>
MutableVectorView<T> mutable_vector_view(Array& array) {
  return MutableVectorView<T>(array.mutable_span<T>().data(), array.size());
}

// A (rows, cols) Array holding a dense Eigen matrix or array expression (a
// column vector gives (n, 1)); the dtype is that of its scalar type.
template <class Derived>
Array from_eigen(const Eigen::DenseBase<Derived>& dense) {
  using T = typename Derived::Scalar;
  Array out = Array::empty({dense.rows(), dense.cols()}, dtype_of<T>());
  mutable_matrix_view<T>(out).array() = dense.derived().array();
  return out;
}

}  // namespace meshsim
