#pragma once
// Which mesh positions take part together in a collective over a list of
// axes, as jax.lax collectives with axis_name=(...) and axis_index_groups.
//
// Words: for collective axes A, the positions that agree on every axis NOT in
// A form a "set" of axis_size(A) positions. Inside a set, a position's "axis
// index" is its index along A combined major-to-minor (axis_index below).
// axis_index_groups, if given, split each set by axis index; without them the
// whole set is one group. A position's "rank" is its place in its group.

#include <span>
#include <string>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"

namespace meshsim {

// Each inner list holds axis indices; together they must cover
// [0, axis_size) exactly once. An empty outer list means "no groups".
using AxisIndexGroups = std::vector<std::vector<int>>;

// Product of the axes' sizes; 1 for no axes. UnknownAxisError if an axis is
// unknown, DuplicateAxisError if one is listed twice.
int axis_size(const AbstractMesh& mesh, std::span<const std::string> axes);

// The axis index of a mesh position along `axes`, first axis major, like
// jax.lax.axis_index(axes): on (i=4, j=2), over ("i", "j") it is i*2+j and
// over ("j", "i") it is j*4+i. 0 for no axes.
int axis_index(const AbstractMesh& mesh, std::span<const std::string> axes, int position);

// Whether `groups` is one group listing every axis index 0 .. axis_size - 1
// in order: the same groups and ranks as no axis_index_groups at all, as in
// JAX (so the two spellings must meet).
bool is_one_whole_group(const AxisIndexGroups& groups, int axis_size);

// GroupError if a group is empty, an index is out of [0, axis_size), an index
// appears twice or is missing, or (if require_equal_sizes, as JAX requires for
// all_gather, psum_scatter, all_to_all) the groups differ in size.
void validate_axis_index_groups(const AbstractMesh& mesh, std::span<const std::string> axes,
                                const AxisIndexGroups& groups, bool require_equal_sizes);

struct DeviceGroups {
  // members[g]: the mesh positions of group g, ordered by rank.
  std::vector<std::vector<int>> members;
  // Per mesh position p: its group and its rank in that group, so
  // members[group_of[p]][rank_of[p]] == p.
  std::vector<int> group_of;
  std::vector<int> rank_of;
};

// The groups of a collective over `axes`. Without axis_index_groups, each set
// is a group and rank = axis index. With them, group k of a set holds the
// positions whose axis index is in groups[k], and rank = the place of the axis
// index in groups[k] (JAX: all_gather over groups [[0, 2], [1, 3]] gives
// axis index 0 [x0, x2] and axis index 1 [x1, x3]).
//
// Numbering: g = set * K + k, where K = max(1, groups.size()) and sets are
// numbered by their smallest mesh position (row-major over the axes not in
// `axes`). So group ids follow the groups list, and the same plan gives the
// same ids on every run. No axes: every position is its own group, rank 0.
//
// Throws UnknownAxisError / DuplicateAxisError / GroupError as axis_size() and validate_axis_index_groups().
DeviceGroups device_groups(const AbstractMesh& mesh, std::span<const std::string> axes,
                           const AxisIndexGroups& groups = {}, bool require_equal_sizes = true);

}  // namespace meshsim
