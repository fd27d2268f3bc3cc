#include "meshsim/runtime/array/array_shape_ops.h"

#include <algorithm>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/internal/box_copy.h"
#include "meshsim/runtime/array/internal/strided_copy.h"

namespace meshsim {
namespace {

std::vector<int64_t> byte_strides(const Array& a) {
  std::vector<int64_t> strides(a.rank());
  auto stride = static_cast<int64_t>(dtype_size(a.dtype()));
  for (int d = a.rank(); d-- > 0;) {
    strides[d] = stride;
    stride *= a.dim(d);
  }
  return strides;
}

std::string list_to_string(ArgSpan<int> list) {
  const std::vector<int64_t> wide(list.begin(), list.end());
  return shape_to_string(wide);
}

std::string shapes_to_string(ArgSpan<Array> arrays) {
  std::string out;
  for (const Array& a : arrays) out += (out.empty() ? "" : ", ") + shape_to_string(a.shape());
  return out;
}

// `axis` in [-rank, rank) as an index in [0, rank).
int normalize_axis(int axis, int rank, const std::string& context) {
  if (axis < -rank || axis >= rank) {
    throw ShapeError(context + ": axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

std::vector<int> normalize_distinct_axes(ArgSpan<int> axes, int rank, const std::string& context) {
  std::vector<int> out;
  for (int axis : axes) {
    const int d = normalize_axis(axis, rank, context);
    if (std::ranges::find(out, d) != out.end()) {
      throw ShapeError(context + ": axis " + std::to_string(axis) + " is repeated");
    }
    out.push_back(d);
  }
  return out;
}

void check_list_length(size_t size, const Array& a, const char* what, const std::string& context) {
  if (size != static_cast<size_t>(a.rank())) {
    throw ShapeError(context + ": " + what + " has " + std::to_string(size) +
                     " entries for an array of rank " + std::to_string(a.rank()));
  }
}

// The array of `shape` whose element i is a's element at byte offset
// `offset` + sum(i[d] * strides[d]).
Array gather(const Array& a, const Shape& shape, int64_t offset, std::span<const int64_t> strides) {
  Array out = Array::empty(shape, a.dtype());
  if (out.size() > 0) {
    strided_gather(a.dtype(), shape, a.bytes() + offset, strides, out.mutable_bytes());
  }
  return out;
}

// JAX's start indices for dynamic_slice / dynamic_update_slice: a negative
// index has the dim added once, then it is clamped so `size` fits.
int64_t clamp_start(int64_t start, int64_t dim, int64_t size) {
  if (start < 0) start += dim;
  return std::clamp<int64_t>(start, 0, dim - size);
}

}  // namespace

Array broadcast_to(const Array& a, const Shape& shape) {
  if (a.shape() == shape) return a;
  static_cast<void>(num_elements(shape));  // ShapeError for a negative dim
  const int rank = static_cast<int>(shape.size());
  const int lead = rank - a.rank();
  const auto error = [&] {
    return ShapeError("cannot broadcast shape " + shape_to_string(a.shape()) + " to " +
                      shape_to_string(shape));
  };
  if (lead < 0) throw error();
  const std::vector<int64_t> source = byte_strides(a);
  std::vector<int64_t> strides(rank, 0);
  for (int d = lead; d < rank; ++d) {
    const int64_t dim = a.dim(d - lead);
    if (dim == shape[d]) {
      strides[d] = source[d - lead];
    } else if (dim != 1) {
      throw error();
    }
  }
  return gather(a, shape, 0, strides);
}

Array slice(const Array& a, ArgSpan<int64_t> start, ArgSpan<int64_t> limit,
            ArgSpan<int64_t> strides) {
  const std::string context = "slice of shape " + shape_to_string(a.shape()) + " from " +
                              shape_to_string(start) + " to " + shape_to_string(limit) +
                              (strides.empty() ? "" : " by " + shape_to_string(strides));
  check_list_length(start.size(), a, "start", context);
  check_list_length(limit.size(), a, "limit", context);
  if (!strides.empty()) check_list_length(strides.size(), a, "strides", context);
  const std::vector<int64_t> source = byte_strides(a);
  Shape shape(a.rank());
  std::vector<int64_t> out_strides(a.rank());
  int64_t offset = 0;
  for (int d = 0; d < a.rank(); ++d) {
    const int64_t step = strides.empty() ? 1 : strides[d];
    if (step < 1) throw InvalidArgumentError(context + ": strides must be at least 1");
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > a.dim(d)) {
      throw ShapeError(context + ": dim " + std::to_string(d) +
                       " needs 0 <= start <= limit <= " + std::to_string(a.dim(d)));
    }
    // ceil(n / step), without the overflow of n + step - 1 for a huge step.
    const int64_t n = limit[d] - start[d];
    shape[d] = n == 0 ? 0 : 1 + (n - 1) / step;
    // With one element or none the stride is never applied (and a huge step
    // times the element stride would overflow); otherwise step < n.
    out_strides[d] = shape[d] <= 1 ? 0 : source[d] * step;
    offset += start[d] * source[d];
  }
  return gather(a, shape, offset, out_strides);
}

Array dynamic_slice(const Array& a, ArgSpan<int64_t> start, ArgSpan<int64_t> sizes) {
  const std::string context = "dynamic_slice of shape " + shape_to_string(a.shape()) +
                              " at " + shape_to_string(start) + " of sizes " +
                              shape_to_string(sizes);
  check_list_length(start.size(), a, "start", context);
  check_list_length(sizes.size(), a, "sizes", context);
  const std::vector<int64_t> strides = byte_strides(a);
  int64_t offset = 0;
  for (int d = 0; d < a.rank(); ++d) {
    if (sizes[d] < 0 || sizes[d] > a.dim(d)) {
      throw ShapeError(context + ": size " + std::to_string(sizes[d]) + " of dim " +
                       std::to_string(d) + " is not in [0, " + std::to_string(a.dim(d)) + "]");
    }
    offset += clamp_start(start[d], a.dim(d), sizes[d]) * strides[d];
  }
  return gather(a, Shape(sizes.begin(), sizes.end()), offset, strides);
}

Array dynamic_update_slice(const Array& a, const Array& update, ArgSpan<int64_t> start) {
  const std::string context = "dynamic_update_slice of shape " + shape_to_string(a.shape()) +
                              " with an update of shape " + shape_to_string(update.shape()) +
                              " at " + shape_to_string(start);
  if (update.dtype() != a.dtype()) {
    throw DTypeError(context + ": the update is " + std::string(dtype_name(update.dtype())) +
                     ", the array " + std::string(dtype_name(a.dtype())));
  }
  check_list_length(start.size(), a, "start", context);
  if (update.rank() != a.rank()) throw ShapeError(context + ": ranks differ");
  Shape origin(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    if (update.dim(d) > a.dim(d)) {
      throw ShapeError(context + ": the update is larger in dim " + std::to_string(d));
    }
    origin[d] = clamp_start(start[d], a.dim(d), update.dim(d));
  }
  Array out = a;
  if (update.size() > 0) {
    const Shape zeros(a.rank(), 0);
    BoxCopy(dtype_size(a.dtype()), update.shape(), update.shape(), zeros, a.shape(), origin)
        .copy_all(update.bytes(), out.mutable_bytes());
  }
  return out;
}

Array concatenate(ArgSpan<Array> arrays, int axis) {
  if (arrays.empty()) throw InvalidArgumentError("concatenate of no arrays");
  const std::string context = "concatenate along axis " + std::to_string(axis) +
                              " of shapes " + shapes_to_string(arrays);
  const int rank = arrays[0].rank();
  if (rank == 0) throw ShapeError(context + ": scalars cannot be concatenated");
  const int along = normalize_axis(axis, rank, context);
  Shape shape = arrays[0].shape();
  shape[along] = 0;
  DType dtype = arrays[0].dtype();
  for (const Array& a : arrays) {
    for (int d = 0; d < rank; ++d) {
      if (a.rank() != rank || (d != along && a.dim(d) != shape[d])) {
        throw ShapeError(context + ": all dims but the axis must agree");
      }
    }
    if (__builtin_add_overflow(shape[along], a.dim(along), &shape[along])) {
      throw ShapeError(context + ": the result has more than 2^63 elements");
    }
    dtype = promote_types(dtype, a.dtype());
  }
  Array out = Array::empty(shape, dtype);
  if (out.size() == 0) return out;
  std::byte* bytes = out.mutable_bytes();
  Shape origin(rank, 0);
  for (const Array& a : arrays) {
    const Array part = a.astype(dtype);
    const Shape zeros(rank, 0);
    BoxCopy(dtype_size(dtype), part.shape(), part.shape(), zeros, shape, origin)
        .copy_all(part.bytes(), bytes);
    origin[along] += part.dim(along);
  }
  return out;
}

Array stack(ArgSpan<Array> arrays, int axis) {
  if (arrays.empty()) throw InvalidArgumentError("stack of no arrays");
  const std::string context = "stack along axis " + std::to_string(axis) + " of shapes " +
                              shapes_to_string(arrays);
  const int along = normalize_axis(axis, arrays[0].rank() + 1, context);
  std::vector<Array> expanded;
  for (const Array& a : arrays) {
    if (a.shape() != arrays[0].shape()) throw ShapeError(context + ": shapes differ");
    expanded.push_back(expand_dims(a, {along}));
  }
  return concatenate(expanded, along);
}

Array expand_dims(const Array& a, ArgSpan<int> axes) {
  const std::string context =
      "expand_dims of shape " + shape_to_string(a.shape()) + " at " + list_to_string(axes);
  const int rank = a.rank() + static_cast<int>(axes.size());
  const std::vector<int> inserted = normalize_distinct_axes(axes, rank, context);
  Shape shape;
  int next = 0;
  for (int d = 0; d < rank; ++d) {
    shape.push_back(std::ranges::find(inserted, d) != inserted.end() ? 1 : a.dim(next++));
  }
  return a.reshape(std::move(shape));
}

Array squeeze(const Array& a, ArgSpan<int> axes) {
  const std::string context =
      "squeeze of shape " + shape_to_string(a.shape()) + " at " + list_to_string(axes);
  const std::vector<int> removed = normalize_distinct_axes(axes, a.rank(), context);
  Shape shape;
  for (int d = 0; d < a.rank(); ++d) {
    if (std::ranges::find(removed, d) == removed.end()) {
      shape.push_back(a.dim(d));
    } else if (a.dim(d) != 1) {
      throw ShapeError(context + ": dim " + std::to_string(d) + " is " +
                       std::to_string(a.dim(d)) + ", not 1");
    }
  }
  return a.reshape(std::move(shape));
}

Array squeeze(const Array& a) {
  Shape shape;
  std::ranges::copy_if(a.shape(), std::back_inserter(shape), [](int64_t d) { return d != 1; });
  return a.reshape(std::move(shape));
}

Array transpose(const Array& a, ArgSpan<int> perm) {
  const std::string context =
      "transpose of shape " + shape_to_string(a.shape()) + " by " + list_to_string(perm);
  if (perm.size() != static_cast<size_t>(a.rank())) {
    throw ShapeError(context + ": the permutation has " + std::to_string(perm.size()) +
                     " axes for rank " + std::to_string(a.rank()));
  }
  const std::vector<int> axes = normalize_distinct_axes(perm, a.rank(), context);
  const std::vector<int64_t> source = byte_strides(a);
  Shape shape(a.rank());
  std::vector<int64_t> strides(a.rank());
  for (int d = 0; d < a.rank(); ++d) {
    shape[d] = a.dim(axes[d]);
    strides[d] = source[axes[d]];
  }
  return gather(a, shape, 0, strides);
}

Array transpose(const Array& a) {
  std::vector<int> reversed(a.rank());
  for (int d = 0; d < a.rank(); ++d) reversed[d] = a.rank() - 1 - d;
  return transpose(a, reversed);
}

}  // namespace meshsim
