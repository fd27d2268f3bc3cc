#include "tools/bench_run.h"

#include <fmt/format.h>

#include <chrono>
#include <string>

#include "meshsim/runtime/exec/runtime.h"
#include "tools/bench_machine.h"
#include "tools/bench_report.h"
#include "tools/bench_timing.h"

namespace meshsim::cli {
namespace {

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
MeetingFloor meeting_floor(const Mesh& mesh) {
  Runtime runtime(mesh.size());
  return measure_meeting_floor(runtime, mesh);
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
                      .meeting = meeting_floor(options.mesh),
                      .floor_size = floor_size};
  if (header.memcpy.gbps() > 0) {
    header.floor_us = collective.floor_bytes(devices, static_cast<double>(floor_size)) /
                      (header.memcpy.gbps() * 1e9) * 1e6;
  }
  RuntimeOptions runtime_options;
  runtime_options.launch_timeout = options.timeout;
  Runtime runtime(options.mesh.size(), runtime_options);
  const std::unique_ptr<ReportWriter> writer = make_report_writer(options.format, out);
  writer->begin(header);
  ProgressLine line(progress);
  ReportSummary summary;
  if (options.check) summary.wrong = 0;
  int rows = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    line.show(fmt::format("# {}: {} B ({}/{})", collective.name, sizes[i], i + 1, sizes.size()));
    const std::optional<Row> row = run_size(runtime, options, sizes[i]);
    if (!row) continue;
    line.clear();
    writer->row(*row);
    if (row->wrong) *summary.wrong += *row->wrong;
    summary.mean_busbw += row->bandwidth.busbw;
    ++rows;
  }
  line.clear();
  if (rows > 0) summary.mean_busbw /= rows;
  writer->end(summary);
  return summary.wrong.value_or(0) > 0 ? 1 : 0;
}

}  // namespace meshsim::cli
