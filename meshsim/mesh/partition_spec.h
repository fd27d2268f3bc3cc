#pragma once
// PartitionSpec: how an array's dimensions are split over mesh axes, as in
// jax.sharding.PartitionSpec. Entry d says how dimension d is split:
// unsharded, over one axis, or over several axes combined major-to-minor.
// Dimensions past the last entry are unsharded. An axis not mentioned at all
// means the array is replicated over it.
//
//   P{}                       fully replicated
//   P{"x", nullptr}           dim 0 over x; nullptr (or {}) = unsharded
//   P{{"x", "y"}}             dim 0 over x then y: P(('x', 'y')) in JAX
//   P{"x", "y"}               dim 0 over x, dim 1 over y
//
// Beware: P({"x", "y"}) with parentheses is P{"x", "y"} (two dims), not
// JAX's P(('x', 'y')); write the braces.

#include <cstddef>
#include <initializer_list>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace meshsim {

class AbstractMesh;

class PartitionSpec {
 public:
  using AxisList = std::vector<std::string>;

  // One dimension's entry. Implicit, so a spec can be written as a brace list.
  struct Entry {
    Entry(std::nullptr_t) {}
    Entry(const char* axis) : axes{axis} {}
    Entry(std::string axis) : axes{std::move(axis)} {}
    Entry(std::initializer_list<std::string> list) : axes(list) {}
    Entry(AxisList list) : axes(std::move(list)) {}
    AxisList axes;  // major-to-minor; empty = unsharded
  };

  // Fully replicated.
  PartitionSpec() = default;
  PartitionSpec(std::initializer_list<Entry> entries);
  explicit PartitionSpec(std::vector<AxisList> entries);

  // Number of entries given (may be less than the array rank).
  int size() const { return static_cast<int>(entries_.size()); }
  // Axes of dimension d; empty for an unsharded d, including d >= size().
  // InvalidArgumentError if d < 0.
  const AxisList& dim(int d) const;
  const std::vector<AxisList>& entries() const { return entries_; }
  // Every axis named, in order of appearance.
  AxisList mentioned_axes() const;

  // UnknownAxisError if an axis is not in the mesh, DuplicateAxisError if an
  // axis is named twice, SpecRankError if there are more entries than rank. Divisibility is checked by shard_shape().
  void validate(const AbstractMesh& mesh, int rank) const;

  // The same spec without trailing unsharded entries: equal for two specs
  // that shard every array the same way.
  PartitionSpec normalized() const;

  // JAX-like: "PartitionSpec('x', None, ('x', 'y'))".
  std::string to_string() const;

  // Entry by entry, as JAX compares specs: P{"x"} != P{"x", nullptr}.
  // Compare normalized() specs for sharding equivalence.
  bool operator==(const PartitionSpec&) const = default;

 private:
  std::vector<AxisList> entries_;
};

using P = PartitionSpec;

inline std::ostream& operator<<(std::ostream& os, const PartitionSpec& spec) {
  return os << spec.to_string();
}

}  // namespace meshsim
