#pragma once
// The writers of `meshsim bench` output: an nccl-tests style table, CSV, or
// JSON, each with the same header facts and rows. Rows are written (and
// flushed) as each size finishes, so a long sweep shows progress and a
// killed one keeps its rows.

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>

#include "tools/bench_machine.h"
#include "tools/bench_options.h"
#include "tools/bench_timing.h"

namespace meshsim::cli {

struct ReportHeader {
  MachineInfo machine;
  const BenchOptions* options = nullptr;
  MemcpyReference memcpy;
  MeetingFloor meeting;   // the small-size floor: one meeting of every device thread
  size_t floor_size = 0;  // S_max: the size the floor is given for
  double floor_us = 0;    // the collective's floor at floor_size (0: none)
};

struct ReportSummary {
  std::optional<int64_t> wrong;  // total wrong elements, with --check
  double mean_busbw = 0;         // over the rows written, GB/s
};

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  // Call begin once, row once per size, end once.
  virtual void begin(const ReportHeader& header) = 0;
  virtual void row(const Row& row) = 0;
  virtual void end(const ReportSummary& summary) = 0;
};

std::unique_ptr<ReportWriter> make_report_writer(OutputFormat format, std::ostream& out);

}  // namespace meshsim::cli
