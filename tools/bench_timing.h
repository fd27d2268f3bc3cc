#pragma once
// One size of a `meshsim bench` sweep: a single launch in which every device
// makes the warmup calls, then the timed calls, of the chosen collective,
// turned into one nccl-tests row. The timing method (pipelined without
// --check; per call from the group's last entry with it) is the one
// bench_help.cc documents.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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
  // What ran and which rule chose it, as mesh position 0 recorded its first
  // call (DeviceContext::collective_records); empty for a front-end that
  // records none.
  std::string algorithm;
  std::string chosen_by;
  // With --topology: one call's modeled time (the latest device's virtual
  // clock at its end) and the busbw it gives.
  std::optional<double> modeled_us;
  double modeled_busbw = 0;
};

// The workload of options.collective at one size of the sweep, with every
// device's expected result under --check; nullopt when the size leaves no
// element per device.
std::optional<Workload> prepare_size(const BenchOptions& options, size_t bytes);

// One launch on `runtime` (which must have the mesh's devices) running `work`
// with `algorithm` (a registered name, "auto", or "" for the runtime's
// choice), turned into a row. Errors of the launch (TimeoutError, a
// collective's error) propagate.
Row time_workload(Runtime& runtime, const BenchOptions& options, const Workload& work,
                  std::string_view algorithm);

// With options.time or `trace`: one more launch of a single call, in virtual
// time when options.time is set (filling row.modeled_*), traced when `trace`
// is set (the events go to `trace`).
void model_workload(Runtime& runtime, const BenchOptions& options, const Workload& work,
                    std::string_view algorithm, Row& row, LaunchRecord* trace);
// prepare_size, then time_workload with `algorithm` (options.algo unless
// given; not "all").
std::optional<Row> run_size(Runtime& runtime, const BenchOptions& options, size_t bytes);
std::optional<Row> run_size(Runtime& runtime, const BenchOptions& options, size_t bytes,
                            std::string_view algorithm);

}  // namespace meshsim::cli
