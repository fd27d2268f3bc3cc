#pragma once
// Shared pieces of the algorithm matrix and provenance tests: the mesh cases
// (group sizes 1 to 64, tuple axes, sub-axes of 2- and 3-axis meshes,
// axis_index_groups), a user-written all-reduce that is registered like any
// other algorithm, and the CallShape a front-end reports for a call, from
// which the test predicts which algorithms' preconditions hold.

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/meshsim.h"
#include "support/param_names.h"

namespace meshsim::matrix {

struct MeshCase {
  std::string name;  // "x4y3_over_x_grouped"
  std::vector<std::pair<std::string, int>> mesh;
  std::vector<std::string> axes;
  AxisIndexGroups groups;
  // Group size 64: only a few dtypes, to keep the file fast.
  bool few_dtypes = false;

  int mesh_size() const {
    int n = 1;
    for (const auto& axis : mesh) n *= axis.second;
    return n;
  }
  bool equal_groups() const {
    for (const auto& g : groups) {
      if (g.size() != groups[0].size()) return false;
    }
    return true;
  }
};

// A mesh case named like "x4y3_over_y_grouped".
inline MeshCase mesh_case(std::vector<std::pair<std::string, int>> mesh,
                          std::vector<std::string> axes, AxisIndexGroups groups = {}) {
  MeshCase c{testing_names::mesh_axes_name(mesh, axes, groups), mesh, axes, groups};
  c.few_dtypes = c.mesh_size() >= 64;
  return c;
}

// The all-reduce a user writes first: every member sends its input to rank 0,
// which reduces them in rank order, then sends the result back to each.
// Declares segment_bytes (4 KiB), so large transfers run segment by segment.
inline Algorithm<AllReduceArgs> gather_to_root_then_broadcast() {
  Algorithm<AllReduceArgs> a;
  a.name = "gather_to_root_then_broadcast";
  a.description = "every member sends to rank 0, which reduces and sends the result back";
  a.cost_formula = "2(n-1)α + 2(n-1)·Sβ + (n-1)·Sγ";
  a.cost = [](const CallShape& s) {
    const double n = s.group_size;
    return CostTerms{2 * (n - 1), 2 * (n - 1) * static_cast<double>(s.bytes),
                     (n - 1) * static_cast<double>(s.bytes)};
  };
  a.tunables = {{"segment_bytes", 4096, "bytes per segment of a transfer"}};
  a.run = [](Communicator& comm, const AllReduceArgs& args) {
    const size_t bytes = static_cast<size_t>(args.count) * dtype_size(args.dtype);
    if (comm.rank() == 0) {
      if (args.out != args.in && bytes > 0) std::memcpy(args.out, args.in, bytes);
      for (int r = 1; r < comm.size(); ++r) {
        comm.recv_reduce(r, args.out, args.count, args.dtype, args.op);
      }
      for (int r = 1; r < comm.size(); ++r) comm.send(r, args.out, bytes);
    } else {
      comm.send(0, args.in, bytes);
      comm.recv(0, args.out, bytes);
    }
  };
  return a;
}

// "" when `info`'s preconditions hold for `shape`, else the unmet one.
inline std::string unmet(const AlgorithmInfo& info, const CallShape& shape) {
  std::string why = unmet_precondition(info.preconditions, shape);
  if (why.empty() && info.check) why = info.check(shape);
  return why;
}

// Segment size for every algorithm that declares "segment_bytes": small, so
// the large counts of the tests move in many segments.
inline constexpr int64_t kSegmentBytes = 64;

// Sets segment_bytes of every built-in that declares it, then registers
// gather_to_root_then_broadcast (whose rank 0 handles every segment of every
// member, so it keeps its larger default to stay cheap on 64 devices).
inline void prepare_registry(Runtime& rt) {
  AlgorithmRegistry& registry = algorithm_registry(rt);
  for (Collective each : kAllCollectives) {
    for (const AlgorithmInfo* info : registry.list(each)) {
      for (const Tunable& t : info->tunables) {
        if (t.name == "segment_bytes") registry.set_tunable(each, info->name, t.name, kSegmentBytes);
      }
    }
  }
  registry.add(gather_to_root_then_broadcast());
}

// The axes of mesh case `c` as the front-ends take them.
inline AxisNames axis_names(const MeshCase& c) { return AxisNames(c.axes); }

}  // namespace meshsim::matrix
