#pragma once
// The collectives `meshsim bench` can run: a table of name -> runner, with
// what nccl-tests reports for each (its size and count conventions, its busbw
// factor) and the memory-traffic floor the help text quotes.
//
// Words: n = group size (devices that meet in one collective over --axes),
// N = devices in the mesh, `bytes` = one size of the sweep (-b .. -e), c =
// bytes / dtype size. As in nccl-tests, a size row reports
// size = max(send, receive) bytes of one device and count = the collective's
// count parameter; sizes are rounded down to whole elements (and to a
// multiple of n elements where the collective splits its buffer in n).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "meshsim/collectives/algorithms/algorithm.h"
#include "meshsim/collectives/internal/reduction.h"
#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/array/dtype.h"

namespace meshsim::cli {

// What the user chose that shapes a workload.
struct BenchParams {
  DType dtype = DType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;       // pbroadcast's source rank
  uint64_t seed = 1;  // ragged_all_to_all's send sizes
};

// One size of a sweep: every device's arguments and, for --check, the result
// each device must receive (computed sequentially on the host; devices of one
// group may share one expected Array).
struct Workload {
  int64_t count = 0;             // nccl-tests' count column
  size_t send_bytes = 0;         // per device
  size_t recv_bytes = 0;         // per device
  DType type = DType::kFloat32;  // the type column: the input dtype
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  std::vector<std::pair<int, int>> perm;  // ppermute's ring
  std::vector<std::vector<Array>> args;   // args[mesh position]
  std::vector<Array> expected;            // expected[mesh position]; empty without --check

  // nccl-tests' size column.
  size_t size() const { return std::max(send_bytes, recv_bytes); }
};

// Which reduction ops a collective takes (--op).
enum class Reduces { kNo, kSumOnly, kAll };

struct Collective {
  std::string_view name;
  std::string_view alias;    // the jax.lax name when it differs, else empty
  std::string_view summary;  // one line for --help
  Reduces reduces = Reduces::kNo;
  bool rooted = false;                           // reports --root in the root column
  bool sweeps = true;  // false: one fixed size, -b/-e/-f ignored
  // The registry's collective whose algorithms --algo chooses from; none:
  // only "direct" (the front-end takes no algorithm).
  std::optional<meshsim::Collective> kind;
  // Elements of one device's input for `elements` = a sweep size / dtype
  // bytes in groups of n: what the registry's CallShape counts (prepare
  // rounds the same way).
  int64_t (*input_count)(int64_t elements, int n) = nullptr;
  // busbw = algbw * bus_factor(n) (nccl-tests' correction).
  double (*bus_factor)(int n) = nullptr;
  std::string_view bus_formula;  // as --help prints it
  // The floor: bytes the whole machine must copy per iteration at size S on N
  // devices, and the formula as --help prints it.
  double (*floor_bytes)(int num_devices, double size) = nullptr;
  std::string_view floor_formula;
  // Builds the workload for one size of the sweep; an empty `args` means the
  // size holds no element per device (the row is skipped).
  Workload (*prepare)(const BenchParams& params, const DeviceGroups& groups, size_t bytes,
                      bool with_expected) = nullptr;
  // One call of the collective on one device with `algorithm` (a registered
  // name or "auto"; ignored when `kind` is none).
  Array (*run)(DeviceContext& ctx, const Workload& work, int position, const AxisNames& axes,
               std::string_view algorithm) = nullptr;
};

// Every collective, in --help order.
std::span<const Collective> collectives();
// By name or alias; nullptr if there is none.
const Collective* find_collective(std::string_view name);

// The call the registry sees when `collective` (which must have a kind) runs at a
// sweep size of `bytes` with `params` over groups of n devices spanning
// `num_axes` axes.
CallShape call_shape(const Collective& collective, const BenchParams& params, int n,
                     int num_axes, size_t bytes);

// algbw = size / seconds and busbw = algbw * bus_factor(n), in GB/s (1e9 B/s),
// as nccl-tests computes them.
struct Bandwidth {
  double algbw = 0;
  double busbw = 0;
};
Bandwidth bandwidth(const Collective& collective, size_t size, double seconds, int n);

}  // namespace meshsim::cli
