#include "tools/bench_run.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/trace/chrome_trace.h"
#include "tools/bench_machine.h"
#include "tools/bench_report.h"
#include "tools/bench_timing.h"

namespace meshsim::cli {
namespace {

// How the bench's runtimes run their devices: as --exec and --bind say.
RuntimeOptions devices_as_asked(const BenchOptions& options) {
  RuntimeOptions runtime_options;
  runtime_options.execution = options.exec;
  runtime_options.bind_threads = options.bind;
  return runtime_options;
}

// A one-line status that rewrites itself with '\r', shown only after
// kQuietPeriod so that short sweeps print nothing.
class ProgressLine {
 public:
  static constexpr std::chrono::seconds kQuietPeriod{1};

  explicit ProgressLine(std::ostream* out) : out_(out), start_(Clock::now()) {}
  ~ProgressLine() { clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void show(const std::string& text) {
    if (out_ == nullptr || Clock::now() - start_ < kQuietPeriod) return;
    *out_ << '\r' << text << std::string(text.size() < shown_ ? shown_ - text.size() : 0, ' ')
          << std::flush;
    shown_ = text.size();
  }
  void clear() {
    if (shown_ == 0) return;
    *out_ << '\r' << std::string(shown_, ' ') << '\r' << std::flush;
    shown_ = 0;
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream* out_;
  Clock::time_point start_;
  size_t shown_ = 0;
};

// The meeting floor, on device threads of a runtime of its own (gone before
// the sweep's starts): without the launch timeout, since its launches take
// about 20 ms each, which a short --timeout-ms would cut, and cannot hang (the
// barriers involve every device and no meshsim wait).
MeetingFloor meeting_floor(const BenchOptions& options) {
  Runtime runtime(options.mesh.size(), devices_as_asked(options));
  return measure_meeting_floor(runtime, options.mesh);
}

// The names of the algorithms `registry` finds applicable to the bench's call
// at `bytes` (the registry's order).
std::vector<std::string> applicable_at(const AlgorithmRegistry& registry,
                                       const BenchOptions& options, size_t bytes) {
  const CallShape shape =
      call_shape(*options.collective, options.params, options.group_size(),
                 static_cast<int>(options.axes.size()), bytes);
  std::vector<std::string> names;
  for (const AlgorithmInfo* info : registry.applicable(shape)) names.push_back(info->name);
  return names;
}

// --algo all's columns: every algorithm applicable at some size of the sweep.
std::vector<std::string> side_by_side(const AlgorithmRegistry& registry,
                                      const BenchOptions& options,
                                      const std::vector<size_t>& sizes) {
  std::vector<std::string> columns;
  for (const AlgorithmInfo* info : registry.list(*options.collective->kind)) {
    for (size_t bytes : sizes) {
      const std::vector<std::string> names = applicable_at(registry, options, bytes);
      if (std::find(names.begin(), names.end(), info->name) != names.end()) {
        columns.push_back(info->name);
        break;
      }
    }
  }
  return columns;
}

// One size: one cell per column (--algo all; the algorithms applicable at
// this size run, one launch each), else one. Empty when the size holds no
// element per device.
// With --topology, each cell also runs one modeled call; `trace` (null: none)
// receives the trace of the last cell's.
std::vector<std::optional<Row>> run_cells(Runtime& runtime, const BenchOptions& options,
                                          const std::vector<std::string>& columns, size_t bytes,
                                          LaunchRecord* trace) {
  const std::optional<Workload> work = prepare_size(options, bytes);
  if (!work) return {};
  const auto cell = [&](std::string_view algorithm) {
    Row row = time_workload(runtime, options, *work, algorithm);
    model_workload(runtime, options, *work, algorithm, row, trace);
    return row;
  };
  if (columns.empty()) return {cell(options.algo)};
  const std::vector<std::string> applicable =
      applicable_at(algorithm_registry(runtime), options, bytes);
  std::vector<std::optional<Row>> cells(columns.size());
  for (size_t i = 0; i < columns.size(); ++i) {
    if (std::find(applicable.begin(), applicable.end(), columns[i]) != applicable.end()) {
      cells[i] = cell(columns[i]);
    }
  }
  return cells;
}

}  // namespace

int run_bench(const BenchOptions& options, std::ostream& out, std::ostream* progress) {
  const Collective& collective = *options.collective;
  const std::vector<size_t> sizes =
      collective.sweeps ? sweep_sizes(options.min_bytes, options.max_bytes, options.step_factor)
                        : std::vector<size_t>{1};
  const size_t floor_size = collective.sweeps ? sizes.back() : options.max_bytes;
  const int devices = options.mesh.size();

  ReportHeader header{.machine = machine_info(),
                      .options = &options,
                      .memcpy = measure_memcpy(memcpy_reference_bytes(devices, floor_size)),
                      .meeting = meeting_floor(options),
                      .floor_size = floor_size};
  if (header.memcpy.gbps() > 0) {
    header.floor_us = collective.floor_bytes(devices, static_cast<double>(floor_size)) /
                      (header.memcpy.gbps() * 1e9) * 1e6;
  }
  RuntimeOptions runtime_options = devices_as_asked(options);
  runtime_options.launch_timeout = options.timeout;
  Runtime runtime(options.mesh.size(), runtime_options);
  if (options.algo == "all") {
    header.columns = side_by_side(algorithm_registry(runtime), options, sizes);
  }
  const std::unique_ptr<ReportWriter> writer = make_report_writer(options.format, out);
  writer->begin(header);
  ProgressLine line(progress);
  ReportSummary summary;
  if (options.check) summary.wrong = 0;
  std::vector<int> algorithm_rows(header.columns.size());
  for (const std::string& name : header.columns) {
    summary.algorithms.push_back({.name = name, .wrong = summary.wrong});
  }
  int rows = 0;
  LaunchRecord trace;
  for (size_t i = 0; i < sizes.size(); ++i) {
    line.show(fmt::format("# {}: {} B ({}/{})", collective.name, sizes[i], i + 1, sizes.size()));
    const bool traced = !options.trace_path.empty() && i + 1 == sizes.size();
    const std::vector<std::optional<Row>> cells =
        run_cells(runtime, options, header.columns, sizes[i], traced ? &trace : nullptr);
    if (cells.empty()) continue;
    line.clear();
    writer->row(cells);
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::optional<Row>& row = cells[c];
      if (!row) continue;
      if (row->wrong) *summary.wrong += *row->wrong;
      summary.mean_busbw += row->bandwidth.busbw;
      ++rows;
      if (summary.algorithms.empty()) continue;
      AlgorithmSummary& a = summary.algorithms[c];
      if (row->wrong) *a.wrong += *row->wrong;
      a.mean_busbw += row->bandwidth.busbw;
      ++algorithm_rows[c];
    }
  }
  line.clear();
  if (rows > 0) summary.mean_busbw /= rows;
  for (size_t c = 0; c < summary.algorithms.size(); ++c) {
    if (algorithm_rows[c] > 0) summary.algorithms[c].mean_busbw /= algorithm_rows[c];
  }
  writer->end(summary);
  if (!options.trace_path.empty()) write_chrome_trace(trace, options.trace_path);
  return summary.wrong.value_or(0) > 0 ? 1 : 0;
}

}  // namespace meshsim::cli
