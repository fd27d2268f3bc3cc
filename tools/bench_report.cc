#include "tools/bench_report.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

#include "meshsim/mesh/internal/format.h"

namespace meshsim::cli {
namespace {

std::string_view op_text(const BenchOptions& o) {
  return o.collective->reduces == Reduces::kNo ? "none" : reduce_op_name(o.params.op);
}

std::string algorithm_text(const ReportHeader& h) {
  const std::string& algo = h.options->algo;
  if (algo.empty()) return "algorithm: the runtime's choice (MESHSIM_ALGO, else direct)";
  if (algo == "all") {
    std::string names;
    for (const std::string& name : h.columns) names += (names.empty() ? "" : ", ") + name;
    return "algorithms side by side: " + names;
  }
  return "algorithm " + algo;
}

// The cells that ran (at least one per size).
const Row& first_cell(std::span<const std::optional<Row>> cells) {
  for (const std::optional<Row>& cell : cells) {
    if (cell) return *cell;
  }
  throw std::logic_error("bench report: a size without any row");
}

std::string wrong_text(const std::optional<int64_t>& wrong) {
  return wrong ? std::to_string(*wrong) : "N/A";
}

// The '#' lines that open a table or a CSV file.
std::string execution_line(const MeetingFloor& m) {
  const char* bound = m.bound ? ", bound to CPUs" : ", unbound";
  return m.execution == ExecutionMode::kFibers
             ? fmt::format("# execution: fibers, {} on {}{}", count_of(m.threads, "device"),
                           count_of(m.fiber_workers, "worker thread"), bound)
             : fmt::format("# execution: threads, one per device ({}{})",
                           count_of(m.threads, "thread"), bound);
}

std::vector<std::string> header_lines(const ReportHeader& h) {
  const BenchOptions& o = *h.options;
  const Collective& c = *o.collective;
  const int n = o.group_size();
  return {
      fmt::format("# meshsim bench {}{}, {}", c.name,
                  c.alias.empty() ? "" : " (" + std::string(c.alias) + ")", algorithm_text(h)),
      fmt::format("# host {}, nproc {}, CPU {}", h.machine.hostname, h.machine.nproc,
                  h.machine.cpu_model),
      fmt::format("# devices {}, {}, axes {}, {} group(s) of {}", o.mesh.size(), o.mesh.to_string(),
                  format_axes(o.axes), o.mesh.size() / n, n),
      fmt::format("# dtype {}, op {}, iters {}, warmup {}, check {}, launch timeout {} ms",
                  dtype_name(o.params.dtype), op_text(o), o.iters, o.warmup, o.check ? "on" : "off",
                  o.timeout.count()),
      "# time = max over devices of (device time / iters); med = median over devices",
      fmt::format(
          "# memcpy reference: {} threads, {} B x {} per run, median of {} runs: {:.2f} GB/s",
          h.memcpy.threads, h.memcpy.bytes, h.memcpy.copies_per_run, h.memcpy.repeats,
          h.memcpy.gbps()),
      h.floor_us > 0 ? fmt::format("# floor at S = {} B: {} / memcpy = {:.2f} us", h.floor_size,
                                   c.floor_formula, h.floor_us)
                     : fmt::format("# floor: {}", c.floor_formula),
      execution_line(h.meeting),
      o.time != nullptr
          ? fmt::format("# topology {}: model = one call's modeled time (latest device's "
                        "virtual clock, {}), mbusbw = busbw at that time",
                        o.topology_text, o.network)
          : "# topology: none (--topology adds modeled time)",
      h.meeting.execution == ExecutionMode::kFibers
          ? fmt::format("# meeting floor: {}, yield barrier {:.2f} us per episode "
                        "(std::barrier: not on fibers, it would block a worker)",
                        count_of(h.meeting.threads, "fiber"), h.meeting.yield_barrier_us)
          : fmt::format("# meeting floor: {}, yield barrier {:.2f} us, std::barrier "
                        "{:.2f} us per episode",
                        count_of(h.meeting.threads, "thread"), h.meeting.yield_barrier_us,
                        h.meeting.std_barrier_us.value_or(0)),
  };
}

// One row per size. With one algorithm, nccl-tests' columns, then what ran
// and the rule that chose it; with --algo all, the leading columns once, then
// time and busbw per algorithm, then the wrong elements of all of them.
class TableWriter : public ReportWriter {
 public:
  explicit TableWriter(std::ostream& out) : out_(out) {}

  void begin(const ReportHeader& header) override {
    for (const std::string& line : header_lines(header)) out_ << line << '\n';
    columns_ = header.columns;
    modeled_ = header.options->time != nullptr;
    out_ << "#\n";
    if (columns_.empty()) {
      out_ << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>7}  "
                          "{:>10}{}  {:<18}  {}\n",
                          "size", "count", "type", "redop", "root", "time", "algbw", "busbw",
                          "#wrong", "med",
                          modeled_ ? fmt::format("  {:>10}  {:>8}", "model", "mbusbw") : "",
                          "algorithm", "chosen by")
           << fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>7}  "
                          "{:>10}{}\n",
                          "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                          modeled_ ? fmt::format("  {:>10}  {:>8}", "(us)", "(GB/s)") : "")
           << std::flush;
      return;
    }
    std::string names = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "", "", "", "", "");
    std::string labels = fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "size", "count",
                                     "type", "redop", "root");
    std::string units =
        fmt::format("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}", "(B)", "(elements)", "", "", "");
    for (const std::string& name : columns_) {
      names += fmt::format("  {:>{}}", name, modeled_ ? 38 : 19);
      labels += fmt::format("  {:>10}  {:>7}", "time", "busbw");
      units += fmt::format("  {:>10}  {:>7}", "(us)", "(GB/s)");
      if (modeled_) {
        labels += fmt::format("  {:>10}  {:>7}", "model", "mbusbw");
        units += fmt::format("  {:>10}  {:>7}", "(us)", "(GB/s)");
      }
    }
    out_ << names << '\n'
         << labels << fmt::format("  {:>7}\n", "#wrong") << units << '\n'
         << std::flush;
  }

  void row(std::span<const std::optional<Row>> cells) override {
    const Row& r = first_cell(cells);
    out_ << fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", r.size, r.count, dtype_name(r.type),
                        r.redop, r.root);
    if (columns_.empty()) {
      out_ << fmt::format("  {:>10.2f}  {:>8.2f}  {:>8.2f}  {:>7}  {:>10.2f}{}  {:<18}  {}\n",
                          r.time_us, r.bandwidth.algbw, r.bandwidth.busbw, wrong_text(r.wrong),
                          r.median_us,
                          modeled_ ? fmt::format("  {:>10.2f}  {:>8.2f}", r.modeled_us.value_or(0),
                                                 r.modeled_busbw)
                                   : "",
                          r.algorithm.empty() ? "-" : r.algorithm,
                          r.chosen_by.empty() ? "-" : r.chosen_by)
           << std::flush;
      return;
    }
    std::optional<int64_t> wrong;
    std::string notes;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (!cells[i]) {
        out_ << fmt::format("  {:>10}  {:>7}", "-", "-");
        if (modeled_) out_ << fmt::format("  {:>10}  {:>7}", "-", "-");
        continue;
      }
      const Row& cell = *cells[i];
      out_ << fmt::format("  {:>10.2f}  {:>7.2f}", cell.time_us, cell.bandwidth.busbw);
      if (modeled_) {
        out_ << fmt::format("  {:>10.2f}  {:>7.2f}", cell.modeled_us.value_or(0),
                            cell.modeled_busbw);
      }
      if (cell.wrong) wrong = wrong.value_or(0) + *cell.wrong;
      if (!cell.algorithm.empty() && cell.algorithm != columns_[i]) {
        notes += fmt::format("# note: at {} B, {} ran as {} (chosen by {})\n", cell.size,
                             columns_[i], cell.algorithm, cell.chosen_by);
      }
    }
    out_ << fmt::format("  {:>7}\n", wrong_text(wrong)) << notes << std::flush;
  }

  void end(const ReportSummary& s) override {
    if (s.wrong) {
      out_ << fmt::format("# wrong elements: {} {}", *s.wrong, *s.wrong == 0 ? "OK" : "WRONG");
      std::string culprits;
      for (const AlgorithmSummary& a : s.algorithms) {
        if (a.wrong.value_or(0) > 0) {
          culprits += fmt::format("{}{} {}", culprits.empty() ? "" : ", ", a.name, *a.wrong);
        }
      }
      out_ << (culprits.empty() ? "" : " (" + culprits + ")") << '\n';
    } else {
      out_ << "# wrong elements: N/A (run with --check)\n";
    }
    if (s.algorithms.empty()) {
      out_ << fmt::format("# mean busbw: {:.2f} GB/s\n", s.mean_busbw) << std::flush;
      return;
    }
    out_ << "# mean busbw (GB/s):";
    for (const AlgorithmSummary& a : s.algorithms) {
      out_ << fmt::format(" {} {:.2f}{}", a.name, a.mean_busbw,
                          &a == &s.algorithms.back() ? "" : ",");
    }
    out_ << '\n' << std::flush;
  }

 private:
  std::ostream& out_;
  std::vector<std::string> columns_;
  bool modeled_ = false;  // --topology: modeled time and busbw after each time
};

// One line per size and algorithm that ran.
class CsvWriter : public ReportWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}

  void begin(const ReportHeader& header) override {
    for (const std::string& line : header_lines(header)) out_ << line << '\n';
    out_ << "size,count,type,redop,root,time_us,algbw_gbps,busbw_gbps,wrong,median_us,"
            "algorithm,chosen_by,modeled_us,modeled_busbw_gbps\n"
         << std::flush;
  }

  void row(std::span<const std::optional<Row>> cells) override {
    for (const std::optional<Row>& r : cells) {
      if (!r) continue;
      out_ << fmt::format("{},{},{},{},{},{:.3f},{:.4f},{:.4f},{},{:.3f},{},{},{},{}\n", r->size,
                          r->count, dtype_name(r->type), r->redop, r->root, r->time_us,
                          r->bandwidth.algbw, r->bandwidth.busbw,
                          r->wrong ? std::to_string(*r->wrong) : "", r->median_us, r->algorithm,
                          r->chosen_by,
                          r->modeled_us ? fmt::format("{:.6g}", *r->modeled_us) : "",
                          r->modeled_us ? fmt::format("{:.4f}", r->modeled_busbw) : "");
    }
    out_ << std::flush;
  }

  void end(const ReportSummary& s) override {
    out_ << "# wrong elements: " << wrong_text(s.wrong) << '\n'
         << fmt::format("# mean busbw: {:.4f} GB/s\n", s.mean_busbw);
    for (const AlgorithmSummary& a : s.algorithms) {
      out_ << fmt::format("# {}: wrong elements {}, mean busbw {:.4f} GB/s\n", a.name,
                          wrong_text(a.wrong), a.mean_busbw);
    }
    out_ << std::flush;
  }

 private:
  std::ostream& out_;
};

// JSON through nlohmann (escaping, numbers; a non-finite number is null).
// The rows are streamed as each size finishes, so the writer emits the outer
// object's punctuation itself and nlohmann every value.
using Json = nlohmann::ordered_json;

template <class T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// A value as compact JSON text; bytes that are not UTF-8 (a hostname, a
// --topology text) become U+FFFD instead of an exception mid-report.
std::string text(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// A value on one line with a space after each ':' and ',' (as Python's
// json.dumps writes it): scripts that grep a row for '"time_us": ' keep
// working, as they did before the writer went through nlohmann.
std::string spaced(const Json& value) {
  if (!value.is_structured() || value.empty()) return text(value);
  std::string out(1, value.is_object() ? '{' : '[');
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin()) out += ", ";
    if (value.is_object()) {
      out += text(it.key());
      out += ": ";
    }
    out += spaced(it.value());
  }
  out += value.is_object() ? '}' : ']';
  return out;
}

class JsonWriter : public ReportWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  void begin(const ReportHeader& h) override {
    const BenchOptions& o = *h.options;
    const Collective& c = *o.collective;
    const Json header = {
        {"collective", c.name},
        {"algorithm", o.algo},
        {"algorithms", h.columns},
        {"machine",
         {{"hostname", h.machine.hostname},
          {"nproc", h.machine.nproc},
          {"cpu_model", h.machine.cpu_model}}},
        {"devices", o.mesh.size()},
        {"mesh", o.mesh.to_string()},
        {"axes", o.axes},
        {"group_size", o.group_size()},
        {"dtype", dtype_name(o.params.dtype)},
        {"op", op_text(o)},
        {"iters", o.iters},
        {"warmup", o.warmup},
        {"check", o.check},
        {"timeout_ms", o.timeout.count()},
        {"topology", o.time ? Json(o.topology_text) : Json(nullptr)},
        {"network", o.time ? Json(o.network) : Json(nullptr)},
        {"time", "max over devices of (device time / iters)"},
        {"memcpy",
         {{"threads", h.memcpy.threads},
          {"bytes", h.memcpy.bytes},
          {"copies_per_run", h.memcpy.copies_per_run},
          {"repeats", h.memcpy.repeats},
          {"seconds", h.memcpy.seconds},
          {"gbps", h.memcpy.gbps()}}},
        {"floor", {{"formula", c.floor_formula}, {"bytes", h.floor_size}, {"us", h.floor_us}}},
        {"execution", to_string(h.meeting.execution)},
        {"fiber_workers", h.meeting.fiber_workers},
        {"bound_to_cpus", h.meeting.bound},
        {"meeting_floor",
         {{"threads", h.meeting.threads},
          {"yield_barrier_us", h.meeting.yield_barrier_us},
          // null on fibers, where it is not measured (not a time of 0)
          {"std_barrier_us",
           h.meeting.std_barrier_us ? Json(*h.meeting.std_barrier_us) : Json(nullptr)}}},
    };
    out_ << "{\n";
    for (const auto& [key, value] : header.items()) {
      out_ << "  " << text(key) << ": " << spaced(value) << ",\n";
    }
    out_ << "  \"rows\": [" << std::flush;
  }

  void row(std::span<const std::optional<Row>> cells) override {
    for (const std::optional<Row>& cell : cells) {
      if (cell) write_row(*cell);
    }
  }

  void end(const ReportSummary& s) override {
    Json per_algorithm = Json::array();
    for (const AlgorithmSummary& a : s.algorithms) {
      per_algorithm.push_back(
          {{"name", a.name}, {"wrong", or_null(a.wrong)}, {"mean_busbw_gbps", a.mean_busbw}});
    }
    out_ << (first_row_ ? "],\n" : "\n  ],\n")
         << "  \"wrong\": " << text(or_null(s.wrong)) << ",\n"
         << "  \"mean_busbw_gbps\": " << text(s.mean_busbw) << ",\n"
         << "  \"per_algorithm\": " << spaced(per_algorithm) << "\n}\n"
         << std::flush;
  }

 private:
  void write_row(const Row& r) {
    const Json row = {
        {"size", r.size},
        {"count", r.count},
        {"type", dtype_name(r.type)},
        {"redop", r.redop},
        {"root", r.root},
        {"time_us", r.time_us},
        {"algbw_gbps", r.bandwidth.algbw},
        {"busbw_gbps", r.bandwidth.busbw},
        {"wrong", or_null(r.wrong)},
        {"median_us", r.median_us},
        {"algorithm", r.algorithm},
        {"chosen_by", r.chosen_by},
        {"modeled_us", or_null(r.modeled_us)},
        {"modeled_busbw_gbps", r.modeled_us ? Json(r.modeled_busbw) : Json(nullptr)},
    };
    out_ << (first_row_ ? "\n    " : ",\n    ") << spaced(row) << std::flush;
    first_row_ = false;
  }

  std::ostream& out_;
  bool first_row_ = true;
};

}  // namespace

std::unique_ptr<ReportWriter> make_report_writer(OutputFormat format, std::ostream& out) {
  switch (format) {
    case OutputFormat::kJson:
      return std::make_unique<JsonWriter>(out);
    case OutputFormat::kCsv:
      return std::make_unique<CsvWriter>(out);
    case OutputFormat::kTable:
      break;
  }
  return std::make_unique<TableWriter>(out);
}

}  // namespace meshsim::cli
