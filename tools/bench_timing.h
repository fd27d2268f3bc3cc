#pragma once
// One size of a `meshsim bench` sweep: a single launch in which every device
// makes the warmup calls, then the timed calls, of the chosen collective,
// turned into one nccl-tests row. The timing method (pipelined without
// --check; per call from the group's last entry with it) is the one
// bench_help.cc documents.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/exec/runtime.h"
#include "tools/bench_collectives.h"
#include "tools/bench_options.h"

namespace meshsim::cli {

// min, min*f, min*f^2, ... up to and including max. Requires 1 <= min <= max
// and f >= 2 (BenchOptions guarantees both).
std::vector<size_t> sweep_sizes(size_t min_bytes, size_t max_bytes, int step_factor);

struct Row {
  size_t size = 0;  // bytes per device (nccl-tests' size column)
  int64_t count = 0;
  DType type = DType::kFloat32;
  std::string_view redop;        // "sum", "max", "min" or "none"
  int root = -1;                 // -1 unless the collective is rooted
  double time_us = 0;            // max over devices of the per-call time
  double median_us = 0;          // median over devices of the per-call time
  Bandwidth bandwidth;           // from time_us
  std::optional<int64_t> wrong;  // with --check: wrong elements, all devices and calls
};

// Runs options.collective at one size of the sweep on `runtime`, which must
// have the mesh's devices. nullopt when the size leaves no element per device.
// Errors of the launch (TimeoutError, a collective's error) propagate.
std::optional<Row> run_size(Runtime& runtime, const BenchOptions& options, size_t bytes);

}  // namespace meshsim::cli
