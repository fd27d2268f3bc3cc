#include "tools/bench_report.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "meshsim/mesh/internal/format.h"

namespace meshsim::cli {
namespace {

std::string_view op_text(const BenchOptions& o) {
  return o.collective->reduces == Reduces::kNo ? "none" : reduce_op_name(o.params.op);
}

// The '#' lines that open a table or a CSV file.
std::vector<std::string> header_lines(const ReportHeader& h) {
  const BenchOptions& o = *h.options;
  const Collective& c = *o.collective;
  const int n = o.group_size();
  return {
      fmt::format("# meshsim bench {}{}, algorithm {}", c.name,
                  c.alias.empty() ? "" : " (" + std::string(c.alias) + ")", o.algo),
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
      fmt::format("# meeting floor: {} threads, yield barrier {:.2f} us, std::barrier {:.2f} us "
                  "per episode",
                  h.meeting.threads, h.meeting.yield_barrier_us, h.meeting.std_barrier_us),
  };
}

class TableWriter : public ReportWriter {
 public:
  explicit TableWriter(std::ostream& out) : out_(out) {}

  void begin(const ReportHeader& header) override {
    for (const std::string& line : header_lines(header)) out_ << line << '\n';
    out_ << "#\n"
         << fmt::format(
                "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>7}  {:>10}\n",
                "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "med")
         << fmt::format(
                "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10}  {:>8}  {:>8}  {:>7}  {:>10}\n",
                "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)")
         << std::flush;
  }

  void row(const Row& r) override {
    out_ << fmt::format(
                "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {:>10.2f}  {:>8.2f}  {:>8.2f}  {:>7}  "
                "{:>10.2f}\n",
                r.size, r.count, dtype_name(r.type), r.redop, r.root, r.time_us, r.bandwidth.algbw,
                r.bandwidth.busbw, r.wrong ? std::to_string(*r.wrong) : "N/A", r.median_us)
         << std::flush;
  }

  void end(const ReportSummary& s) override {
    if (s.wrong) {
      out_ << fmt::format("# wrong elements: {} {}\n", *s.wrong, *s.wrong == 0 ? "OK" : "WRONG");
    } else {
      out_ << "# wrong elements: N/A (run with --check)\n";
    }
    out_ << fmt::format("# mean busbw: {:.2f} GB/s\n", s.mean_busbw) << std::flush;
  }

 private:
  std::ostream& out_;
};

class CsvWriter : public ReportWriter {
 public:
  explicit CsvWriter(std::ostream& out) : out_(out) {}

  void begin(const ReportHeader& header) override {
    for (const std::string& line : header_lines(header)) out_ << line << '\n';
    out_ << "size,count,type,redop,root,time_us,algbw_gbps,busbw_gbps,wrong,median_us\n"
         << std::flush;
  }

  void row(const Row& r) override {
    out_ << fmt::format("{},{},{},{},{},{:.3f},{:.4f},{:.4f},{},{:.3f}\n", r.size, r.count,
                        dtype_name(r.type), r.redop, r.root, r.time_us, r.bandwidth.algbw,
                        r.bandwidth.busbw, r.wrong ? std::to_string(*r.wrong) : "", r.median_us)
         << std::flush;
  }

  void end(const ReportSummary& s) override {
    out_ << "# wrong elements: " << (s.wrong ? std::to_string(*s.wrong) : "N/A") << '\n'
         << fmt::format("# mean busbw: {:.4f} GB/s\n", s.mean_busbw) << std::flush;
  }

 private:
  std::ostream& out_;
};

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(ch));
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : "null";
}

class JsonWriter : public ReportWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  void begin(const ReportHeader& h) override {
    const BenchOptions& o = *h.options;
    const Collective& c = *o.collective;
    std::string axes;
    for (const std::string& axis : o.axes) axes += (axes.empty() ? "" : ", ") + json_string(axis);
    out_ << "{\n"
         << "  \"collective\": " << json_string(c.name) << ",\n"
         << "  \"algorithm\": " << json_string(o.algo) << ",\n"
         << "  \"machine\": {\"hostname\": " << json_string(h.machine.hostname)
         << ", \"nproc\": " << h.machine.nproc
         << ", \"cpu_model\": " << json_string(h.machine.cpu_model) << "},\n"
         << "  \"devices\": " << o.mesh.size() << ",\n"
         << "  \"mesh\": " << json_string(o.mesh.to_string()) << ",\n"
         << "  \"axes\": [" << axes << "],\n"
         << "  \"group_size\": " << o.group_size() << ",\n"
         << "  \"dtype\": " << json_string(dtype_name(o.params.dtype)) << ",\n"
         << "  \"op\": " << json_string(op_text(o)) << ",\n"
         << "  \"iters\": " << o.iters << ",\n"
         << "  \"warmup\": " << o.warmup << ",\n"
         << "  \"check\": " << (o.check ? "true" : "false") << ",\n"
         << "  \"timeout_ms\": " << o.timeout.count() << ",\n"
         << "  \"time\": \"max over devices of (device time / iters)\",\n"
         << "  \"memcpy\": {\"threads\": " << h.memcpy.threads << ", \"bytes\": " << h.memcpy.bytes
         << ", \"copies_per_run\": " << h.memcpy.copies_per_run
         << ", \"repeats\": " << h.memcpy.repeats
         << ", \"seconds\": " << json_number(h.memcpy.seconds)
         << ", \"gbps\": " << json_number(h.memcpy.gbps()) << "},\n"
         << "  \"floor\": {\"formula\": " << json_string(c.floor_formula)
         << ", \"bytes\": " << h.floor_size << ", \"us\": " << json_number(h.floor_us) << "},\n"
         << "  \"meeting_floor\": {\"threads\": " << h.meeting.threads
         << ", \"yield_barrier_us\": " << json_number(h.meeting.yield_barrier_us)
         << ", \"std_barrier_us\": " << json_number(h.meeting.std_barrier_us) << "},\n"
         << "  \"rows\": [" << std::flush;
  }

  void row(const Row& r) override {
    out_ << (first_row_ ? "\n" : ",\n") << "    {\"size\": " << r.size << ", \"count\": " << r.count
         << ", \"type\": " << json_string(dtype_name(r.type))
         << ", \"redop\": " << json_string(r.redop) << ", \"root\": " << r.root
         << ", \"time_us\": " << json_number(r.time_us)
         << ", \"algbw_gbps\": " << json_number(r.bandwidth.algbw)
         << ", \"busbw_gbps\": " << json_number(r.bandwidth.busbw)
         << ", \"wrong\": " << (r.wrong ? std::to_string(*r.wrong) : "null")
         << ", \"median_us\": " << json_number(r.median_us) << "}" << std::flush;
    first_row_ = false;
  }

  void end(const ReportSummary& s) override {
    out_ << (first_row_ ? "],\n" : "\n  ],\n")
         << "  \"wrong\": " << (s.wrong ? std::to_string(*s.wrong) : "null") << ",\n"
         << "  \"mean_busbw_gbps\": " << json_number(s.mean_busbw) << "\n}\n"
         << std::flush;
  }

 private:
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
