#include "meshsim/mesh/partition_spec.h"

#include <algorithm>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {

PartitionSpec::PartitionSpec(std::initializer_list<Entry> entries) {
  entries_.reserve(entries.size());
  for (const Entry& e : entries) entries_.push_back(e.axes);
}

PartitionSpec::PartitionSpec(std::vector<AxisList> entries) : entries_(std::move(entries)) {}

const PartitionSpec::AxisList& PartitionSpec::dim(int d) const {
  static const AxisList kUnsharded;
  if (d < 0) {
    throw InvalidArgumentError("negative dimension " + std::to_string(d) + " for " + to_string());
  }
  return d < size() ? entries_[d] : kUnsharded;
}

PartitionSpec::AxisList PartitionSpec::mentioned_axes() const {
  AxisList out;
  for (const AxisList& entry : entries_) out.insert(out.end(), entry.begin(), entry.end());
  return out;
}

void PartitionSpec::validate(const AbstractMesh& mesh, int rank) const {
  AxisList seen;
  for (const std::string& axis : mentioned_axes()) {
    if (!mesh.find_axis(axis)) {
      throw UnknownAxisError("unknown axis " + quote_axis(axis) + " in " + to_string() +
                      "; mesh axes are (" + mesh.axes_to_string() + ")");
    }
    if (std::find(seen.begin(), seen.end(), axis) != seen.end()) {
      throw DuplicateAxisError("axis " + quote_axis(axis) + " is used twice in " + to_string() +
                      "; an axis may shard at most one dimension, once");
    }
    seen.push_back(axis);
  }
  if (size() > rank) {
    throw SpecRankError(to_string() + " has " + count_of(size(), "entry", "entries") +
                        " but the array has rank " + std::to_string(rank));
  }
}

PartitionSpec PartitionSpec::normalized() const {
  std::vector<AxisList> entries = entries_;
  while (!entries.empty() && entries.back().empty()) entries.pop_back();
  return PartitionSpec(std::move(entries));
}

std::string PartitionSpec::to_string() const {
  std::string out = "PartitionSpec(";
  for (size_t d = 0; d < entries_.size(); ++d) {
    if (d > 0) out += ", ";
    out += entries_[d].empty() ? "None" : format_axes(entries_[d]);
  }
  return out + ")";
}

}  // namespace meshsim
