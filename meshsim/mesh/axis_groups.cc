#include "meshsim/mesh/axis_groups.h"

#include <numeric>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace {

// Mesh axis numbers of `axes`, in the given order.
std::vector<int> resolve_axes(const AbstractMesh& mesh, std::span<const std::string> axes) {
  std::vector<int> out;
  out.reserve(axes.size());
  for (const std::string& name : axes) {
    auto axis = mesh.find_axis(name);
    if (!axis) {
      throw UnknownAxisError("unknown axis " + quote_axis(name) + " in axes " + format_axes(axes) +
                      "; mesh axes are (" + mesh.axes_to_string() + ")");
    }
    for (int seen : out) {
      if (seen == *axis) {
        throw DuplicateAxisError("axis " + quote_axis(name) + " is listed twice in axes " +
                        format_axes(axes));
      }
    }
    out.push_back(*axis);
  }
  return out;
}

// Index along the resolved axes, first axis major.
int combined_index(const AbstractMesh& mesh, const std::vector<int>& axis_ids,
                   const std::vector<int>& coords) {
  int index = 0;
  for (int a : axis_ids) index = index * mesh.axis_sizes()[a] + coords[a];
  return index;
}

std::string format_groups(const AxisIndexGroups& groups) {
  std::string out = "[";
  for (size_t g = 0; g < groups.size(); ++g) {
    if (g > 0) out += ", ";
    out += format_ints(std::span<const int>(groups[g]));
  }
  return out + "]";
}

}  // namespace

int axis_size(const AbstractMesh& mesh, std::span<const std::string> axes) {
  int size = 1;
  for (int a : resolve_axes(mesh, axes)) size *= mesh.axis_sizes()[a];
  return size;
}

int axis_index(const AbstractMesh& mesh, std::span<const std::string> axes, int position) {
  return combined_index(mesh, resolve_axes(mesh, axes), mesh.coords(position));
}

bool is_one_whole_group(const AxisIndexGroups& groups, int axis_size) {
  if (groups.size() != 1 || groups[0].size() != static_cast<size_t>(axis_size)) return false;
  for (int i = 0; i < axis_size; ++i) {
    if (groups[0][i] != i) return false;
  }
  return true;
}

void validate_axis_index_groups(const AbstractMesh& mesh, std::span<const std::string> axes,
                                const AxisIndexGroups& groups, bool require_equal_sizes) {
  const int n = axis_size(mesh, axes);
  auto fail = [&](const std::string& what) {
    throw GroupError("axis_index_groups " + format_groups(groups) + " over axes " +
                     format_axes(axes) + " (size " + std::to_string(n) + "): " + what);
  };
  std::vector<int> group_of_index(n, -1);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) fail("group " + std::to_string(g) + " is empty");
    if (require_equal_sizes && groups[g].size() != groups[0].size()) {
      fail("group " + std::to_string(g) + " has " + std::to_string(groups[g].size()) +
           " indices but group 0 has " + std::to_string(groups[0].size()) +
           "; this collective needs groups of equal sizes");
    }
    for (int index : groups[g]) {
      if (index < 0 || index >= n) {
        fail("index " + std::to_string(index) + " in group " + std::to_string(g) +
             " is out of range [0, " + std::to_string(n) + ")");
      }
      if (group_of_index[index] >= 0) {
        fail("index " + std::to_string(index) + " appears twice, in groups " +
             std::to_string(group_of_index[index]) + " and " + std::to_string(g));
      }
      group_of_index[index] = static_cast<int>(g);
    }
  }
  for (int index = 0; index < n; ++index) {
    if (group_of_index[index] < 0) fail("index " + std::to_string(index) + " is in no group");
  }
}

DeviceGroups device_groups(const AbstractMesh& mesh, std::span<const std::string> axes,
                           const AxisIndexGroups& groups, bool require_equal_sizes) {
  const std::vector<int> axis_ids = resolve_axes(mesh, axes);
  const int n = axis_size(mesh, axes);
  if (!groups.empty()) validate_axis_index_groups(mesh, axes, groups, require_equal_sizes);

  // No groups: one group per set holding every axis index, rank = index.
  AxisIndexGroups list = groups;
  if (list.empty()) {
    list.emplace_back(n);
    std::iota(list[0].begin(), list[0].end(), 0);
  }
  // Per axis index: its group k in the list and its rank there.
  std::vector<int> k_of(n), rank_of_index(n);
  for (size_t k = 0; k < list.size(); ++k) {
    for (size_t r = 0; r < list[k].size(); ++r) {
      k_of[list[k][r]] = static_cast<int>(k);
      rank_of_index[list[k][r]] = static_cast<int>(r);
    }
  }

  // The set of a position: its row-major index over the axes not in `axes`.
  std::vector<bool> collective(mesh.num_axes(), false);
  for (int a : axis_ids) collective[a] = true;

  const int num_sets = mesh.size() / n;
  const int per_set = static_cast<int>(list.size());
  DeviceGroups out;
  out.members.resize(static_cast<size_t>(num_sets) * per_set);
  for (int s = 0; s < num_sets; ++s) {
    for (int k = 0; k < per_set; ++k) out.members[s * per_set + k].resize(list[k].size());
  }
  out.group_of.resize(mesh.size());
  out.rank_of.resize(mesh.size());
  for (int p = 0; p < mesh.size(); ++p) {
    const std::vector<int> coords = mesh.coords(p);
    int set = 0;
    for (int a = 0; a < mesh.num_axes(); ++a) {
      if (!collective[a]) set = set * mesh.axis_sizes()[a] + coords[a];
    }
    const int index = combined_index(mesh, axis_ids, coords);
    const int g = set * per_set + k_of[index];
    out.group_of[p] = g;
    out.rank_of[p] = rank_of_index[index];
    out.members[g][rank_of_index[index]] = p;
  }
  return out;
}

}  // namespace meshsim
