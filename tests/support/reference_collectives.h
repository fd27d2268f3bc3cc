#pragma once
// Sequential host references for the collectives, written from the jax.lax
// docstrings by index arithmetic. They share no code with meshsim's
// collectives (no device_groups, no reduce_into), so a test that compares the
// library with them checks it against an independent account of the
// semantics.
//
// Values are doubles: every dtype these references accept (int32, int64,
// float16, bfloat16, float32, float64) holds its values exactly in a double
// while integers stay below 2^53. Accumulation follows meshsim's documented
// rules (collectives/reduction.h): ranks in order; float16 / bfloat16 /
// float32 accumulate in float32 and round once to the dtype; float64 in
// float64. Integer sums are exact int64 sums: callers keep values small, so
// wrap-around (which meshsim performs) never arises. bool is not accepted.
//
// Axis parameters (all_gather axis, scatter dimension, split / concat axes)
// are canonical here, in [0, rank): callers resolve negative ones.

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "meshsim/meshsim.h"

namespace meshsim::reference {

struct HostArray {
  DType dtype = DType::kFloat64;
  Shape shape;
  std::vector<double> values;  // row-major
};

inline HostArray to_host(const Array& a) {
  HostArray h{a.dtype(), a.shape(), {}};
  h.values.reserve(static_cast<size_t>(a.size()));
  visit_dtype(a.dtype(), [&]<class T>(std::type_identity<T>) {
    for (const T& v : a.span<T>()) h.values.push_back(static_cast<double>(v));
  });
  return h;
}

// A value computed exactly (in float32 for the 16-bit floats), rounded to `dtype`.
inline double round_to(DType dtype, double v) {
  switch (dtype) {
    case DType::kFloat32: return static_cast<float>(v);
    case DType::kBFloat16: return static_cast<float>(Eigen::bfloat16(static_cast<float>(v)));
    case DType::kFloat16: return static_cast<float>(Eigen::half(static_cast<float>(v)));
    default: return v;  // float64, and integers kept exact by the caller
  }
}

// The groups of a collective over `axes` on a mesh of `mesh_axes`, as
// jax.lax defines them: positions (row-major, last axis fastest) that agree on
// every axis not in `axes` form a set; a position's axis index combines its
// coordinates along `axes` major-to-minor; axis_index_groups split each set,
// and the rank is the place of the axis index in its group (the axis index
// itself without groups). members[g][rank] is a mesh position; group ids are
// arbitrary.
struct Groups {
  std::vector<std::vector<int>> members;
  std::vector<int> group_of;
  std::vector<int> rank_of;
};

inline Groups groups_of(const std::vector<std::pair<std::string, int>>& mesh_axes,
                        const std::vector<std::string>& axes, const AxisIndexGroups& index_groups) {
  const int num_axes = static_cast<int>(mesh_axes.size());
  int num_positions = 1;
  for (const auto& axis : mesh_axes) num_positions *= axis.second;
  const auto position_of_axis = [&](const std::string& name) {
    for (int a = 0; a < num_axes; ++a) {
      if (mesh_axes[a].first == name) return a;
    }
    return -1;
  };
  std::vector<bool> collective(num_axes, false);
  for (const auto& name : axes) collective[position_of_axis(name)] = true;

  Groups out;
  out.group_of.resize(num_positions);
  out.rank_of.resize(num_positions);
  std::map<std::pair<int, int>, int> id_of;  // (set, index group) -> group id
  for (int p = 0; p < num_positions; ++p) {
    std::vector<int> coord(num_axes);
    for (int a = num_axes, rest = p; a-- > 0;) {
      coord[a] = rest % mesh_axes[a].second;
      rest /= mesh_axes[a].second;
    }
    int index = 0;
    for (const auto& name : axes) {
      const int a = position_of_axis(name);
      index = index * mesh_axes[a].second + coord[a];
    }
    int set = 0;
    for (int a = 0; a < num_axes; ++a) {
      if (!collective[a]) set = set * mesh_axes[a].second + coord[a];
    }
    int which = 0;
    int rank = index;
    for (size_t k = 0; k < index_groups.size(); ++k) {
      const auto& group = index_groups[k];
      const auto it = std::find(group.begin(), group.end(), index);
      if (it != group.end()) {
        which = static_cast<int>(k);
        rank = static_cast<int>(it - group.begin());
      }
    }
    const auto [it, added] = id_of.try_emplace({set, which}, static_cast<int>(out.members.size()));
    if (added) out.members.emplace_back();
    auto& members = out.members[it->second];
    if (static_cast<int>(members.size()) <= rank) members.resize(rank + 1, -1);
    members[rank] = p;
    out.group_of[p] = it->second;
    out.rank_of[p] = rank;
  }
  return out;
}

// The inputs of a group's members, in rank order.
using Members = std::vector<const HostArray*>;

enum class Reduction { kSum, kMax, kMin, kMean };

// psum / pmax / pmin / pmean of the members' inputs. pmean divides the sum by
// the group size: in float64 for float64, in float32 for the other floats
// (rounded once to the dtype), and in float32 for integers, whose result is
// float32.
inline HostArray reduce(Reduction kind, const Members& members) {
  const HostArray& first = *members[0];
  const DType dtype = first.dtype;
  const bool wide = dtype == DType::kFloat64;
  const bool floating = is_floating(dtype);
  HostArray out{kind == Reduction::kMean && !floating ? DType::kFloat32 : dtype, first.shape, {}};
  const int n = static_cast<int>(members.size());
  for (size_t i = 0; i < first.values.size(); ++i) {
    double acc = first.values[i];
    float acc32 = static_cast<float>(first.values[i]);
    for (int r = 1; r < n; ++r) {
      const double v = members[r]->values[i];
      switch (kind) {
        case Reduction::kSum:
        case Reduction::kMean:
          acc += v;  // exact for integers and float64 sums of small integers
          acc32 += static_cast<float>(v);
          break;
        case Reduction::kMax: acc = std::max(acc, v); break;
        case Reduction::kMin: acc = std::min(acc, v); break;
      }
    }
    double result = acc;
    if (kind == Reduction::kSum && floating && !wide) result = acc32;
    if (kind == Reduction::kMean) {
      result = wide ? acc / n
                    : static_cast<double>((floating ? acc32 : static_cast<float>(acc)) /
                                          static_cast<float>(n));
    }
    out.values.push_back(round_to(out.dtype, result));
  }
  return out;
}

// pargmax / pargmin: per element, the lowest rank holding the largest /
// smallest value; int32.
inline HostArray argreduce(bool max, const Members& members) {
  HostArray out{DType::kInt32, members[0]->shape, {}};
  for (size_t i = 0; i < members[0]->values.size(); ++i) {
    int best = 0;
    for (int r = 1; r < static_cast<int>(members.size()); ++r) {
      const double v = members[r]->values[i];
      const double b = members[best]->values[i];
      if (max ? v > b : v < b) best = r;
    }
    out.values.push_back(best);
  }
  return out;
}

// The product of shape[begin, end).
inline int64_t dims_product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t d = begin; d < end; ++d) p *= shape[d];
  return p;
}

// all_gather: stacked, out[..., r at axis, ...] = x_r (a new dim of size n at
// `axis`, in [0, rank]); tiled, the x_r concatenated along `axis`. The same
// for every member.
inline HostArray all_gather(const Members& members, int axis, bool tiled) {
  const Shape& shape = members[0]->shape;
  const int64_t n = static_cast<int64_t>(members.size());
  HostArray out{members[0]->dtype, shape, {}};
  const int64_t outer = dims_product(shape, 0, axis);
  const int64_t inner = dims_product(shape, axis + (tiled ? 1 : 0), shape.size());
  const int64_t d = tiled ? shape[axis] : 1;  // rows each member adds along `axis`
  if (tiled) {
    out.shape[axis] *= n;
  } else {
    out.shape.insert(out.shape.begin() + axis, n);
  }
  out.values.resize(static_cast<size_t>(outer * n * d * inner));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t j = 0; j < d; ++j) {
        for (int64_t in = 0; in < inner; ++in) {
          out.values[((o * n + r) * d + j) * inner + in] = members[r]->values[(o * d + j) * inner + in];
        }
      }
    }
  }
  return out;
}

// psum_scatter for the member of rank `rank`: the psum of the members' inputs,
// of which it keeps index `rank` along `dimension` (stacked: that dim, of size
// n, removed) or the rank-th of n equal blocks along it (tiled).
inline HostArray psum_scatter(const Members& members, int rank, int dimension, bool tiled) {
  const HostArray sum = reduce(Reduction::kSum, members);
  const int64_t n = static_cast<int64_t>(members.size());
  const int64_t outer = dims_product(sum.shape, 0, dimension);
  const int64_t inner = dims_product(sum.shape, dimension + 1, sum.shape.size());
  const int64_t full = sum.shape[dimension];
  const int64_t block = full / n;
  HostArray out{sum.dtype, sum.shape, {}};
  if (tiled) {
    out.shape[dimension] = block;
  } else {
    out.shape.erase(out.shape.begin() + dimension);
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < block; ++j) {
      for (int64_t in = 0; in < inner; ++in) {
        out.values.push_back(sum.values[(o * full + rank * block + j) * inner + in]);
      }
    }
  }
  return out;
}

inline Shape unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

inline int64_t ravel(const Shape& index, const Shape& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

// all_to_all for the member of rank `rank`. Tiled: chunk `rank` (of n along
// split) of every member's x, concatenated along concat in sender rank order.
// Stacked (x.shape[split] == n): out[..., s at concat, ...] = x_s[..., rank at
// split, ...], the split dim removed and a dim of n inserted at concat.
// pswapaxes(axis) is the stacked form with split == concat == axis.
inline HostArray all_to_all(const Members& members, int rank, int split, int concat, bool tiled) {
  const Shape& in_shape = members[0]->shape;
  const int64_t n = static_cast<int64_t>(members.size());
  Shape chunk_shape = in_shape;  // what one sender sends one receiver
  HostArray out{members[0]->dtype, in_shape, {}};
  if (tiled) {
    chunk_shape[split] /= n;
    out.shape = chunk_shape;
    out.shape[concat] *= n;
  } else {
    out.shape.erase(out.shape.begin() + split);
    out.shape.insert(out.shape.begin() + concat, n);
  }
  const int64_t size = static_cast<int64_t>(members[0]->values.size());
  for (int64_t f = 0; f < size; ++f) {
    const Shape index = unravel(f, out.shape);
    Shape source = index;
    int64_t sender;
    if (tiled) {
      sender = index[concat] / chunk_shape[concat];
      source[concat] = index[concat] % chunk_shape[concat];
      source[split] += rank * chunk_shape[split];
    } else {
      sender = index[concat];
      source.erase(source.begin() + concat);
      source.insert(source.begin() + split, rank);
    }
    out.values.push_back(members[sender]->values[ravel(source, in_shape)]);
  }
  return out;
}

// One member's four ragged_all_to_all index arrays.
struct RaggedIndices {
  std::vector<int64_t> input_offsets, send_sizes, output_offsets;
  std::vector<int64_t> recv_sizes;
};

// ragged_all_to_all for the member of rank `rank`: its `output` with, for
// every sender s in rank order and every entry e of s addressed to it
// (e / (K / n) == rank), rows [input_offsets[e], + send_sizes[e]) of s's
// operand written at rows [output_offsets[e], ...) — the sender's offsets.
inline HostArray ragged_all_to_all(const Members& operands, const std::vector<RaggedIndices>& indices,
                                   int rank, const HostArray& output) {
  HostArray out = output;
  const int64_t row = dims_product(output.shape, 1, output.shape.size());
  const size_t per_peer = indices[0].send_sizes.size() / operands.size();
  for (size_t s = 0; s < operands.size(); ++s) {
    for (size_t t = 0; t < per_peer; ++t) {
      const size_t e = rank * per_peer + t;
      const RaggedIndices& sender = indices[s];
      for (int64_t i = 0; i < sender.send_sizes[e] * row; ++i) {
        out.values[(sender.output_offsets[e] * row) + i] =
            operands[s]->values[(sender.input_offsets[e] * row) + i];
      }
    }
  }
  return out;
}

// "" if `actual` has the expected dtype, shape and values; otherwise what differs
// (the first differing element by multi-index, with both values).
inline std::string difference(const HostArray& expected, const Array& actual) {
  if (actual.dtype() != expected.dtype || actual.shape() != expected.shape) {
    return "expected " + std::string(dtype_name(expected.dtype)) + shape_to_string(expected.shape) +
           ", got " + std::string(dtype_name(actual.dtype())) + shape_to_string(actual.shape());
  }
  const HostArray got = to_host(actual);
  for (size_t i = 0; i < got.values.size(); ++i) {
    if (got.values[i] != expected.values[i]) {
      return "at index " + shape_to_string(unravel(static_cast<int64_t>(i), expected.shape)) +
             " expected " + std::to_string(expected.values[i]) + ", got " +
             std::to_string(got.values[i]);
    }
  }
  return "";
}

}  // namespace meshsim::reference
