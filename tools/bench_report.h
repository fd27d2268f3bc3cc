#pragma once
// The writers of `meshsim bench` output: an nccl-tests style table, CSV, or
// JSON, each with the same header facts and rows. Rows are written (and
// flushed) as each size finishes, so a long sweep shows progress and a
// killed one keeps its rows.

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

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
  // --algo all: the algorithms side by side, one column group each (those
  // applicable at some size of the sweep, in the registry's order); empty
  // otherwise.
  std::vector<std::string> columns = {};
};

struct AlgorithmSummary {
  std::string name;
  std::optional<int64_t> wrong;  // with --check
  double mean_busbw = 0;         // over the sizes it ran at, GB/s
};

struct ReportSummary {
  std::optional<int64_t> wrong;  // total wrong elements, with --check
  double mean_busbw = 0;         // over the rows written, GB/s
  std::vector<AlgorithmSummary> algorithms;  // --algo all: one per column
};

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  // Call begin once, row once per size, end once. `cells` holds one row per
  // column of the header (--algo all; nullopt where that algorithm does not
  // apply at this size, at least one set), else exactly one.
  virtual void begin(const ReportHeader& header) = 0;
  virtual void row(std::span<const std::optional<Row>> cells) = 0;
  virtual void end(const ReportSummary& summary) = 0;
};

std::unique_ptr<ReportWriter> make_report_writer(OutputFormat format, std::ostream& out);

}  // namespace meshsim::cli
