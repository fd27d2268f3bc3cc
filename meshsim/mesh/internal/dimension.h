#pragma once
// Dimension indices as JAX takes them (in_axes, out_axes, all_gather's axis,
// psum_scatter's scatter_dimension, ...): a negative index counts from the end.

#include <optional>

namespace meshsim {

// `dim` in [0, rank) if it lies in [-rank, rank), as JAX's canonicalize_axis;
// nullopt otherwise, for the caller to word the error (it knows the operation
// and the parameter).
inline std::optional<int> canonical_dimension(int dim, int rank) {
  if (dim < -rank || dim >= rank) return std::nullopt;
  return dim < 0 ? dim + rank : dim;
}

}  // namespace meshsim
