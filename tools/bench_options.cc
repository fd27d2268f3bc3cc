#include "tools/bench_options.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/mesh/axis_groups.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/exec/wait_policy.h"
#include "tools/algorithms_command.h"
#include "tools/bench_help.h"
#include "tools/cli_parse.h"

namespace meshsim::cli {
namespace {

std::string collective_names() {
  std::string names;
  for (const Collective& c : collectives()) {
    if (!names.empty()) names += ", ";
    names += c.name;
    if (!c.alias.empty()) names += " (" + std::string(c.alias) + ")";
  }
  return names;
}

void require_at_least(std::string_view option, int64_t value, int64_t minimum) {
  if (value < minimum) {
    throw bad_value(option, std::to_string(value), "must be at least " + std::to_string(minimum));
  }
}

ReduceOp parse_op(std::string_view text) {
  if (text == "sum") return ReduceOp::kSum;
  if (text == "max") return ReduceOp::kMax;
  if (text == "min") return ReduceOp::kMin;
  throw bad_value("--op", text, "choose sum, max or min");
}

OutputFormat parse_format(std::string_view text) {
  if (text == "table") return OutputFormat::kTable;
  if (text == "json") return OutputFormat::kJson;
  if (text == "csv") return OutputFormat::kCsv;
  throw bad_value("--format", text, "choose table, json or csv");
}

}  // namespace

std::vector<std::string> algorithm_choices(const Collective& collective) {
  if (!collective.kind) return {"direct"};
  Runtime fresh(registry_only_runtime());
  std::vector<std::string> names;
  for (const AlgorithmInfo* info : algorithm_registry(fresh).list(*collective.kind)) {
    names.push_back(info->name);
  }
  names.insert(names.end(), {"auto", "all"});
  return names;
}

int BenchOptions::group_size() const { return axis_size(mesh.abstract_mesh(), axes); }

size_t parse_bytes(std::string_view text, std::string_view option) {
  constexpr uint64_t kMax = std::numeric_limits<int64_t>::max();
  std::string_view digits = text;
  int shift = 0;
  if (!digits.empty()) {
    switch (std::tolower(static_cast<unsigned char>(digits.back()))) {
      case 'k':
        shift = 10;
        break;
      case 'm':
        shift = 20;
        break;
      case 'g':
        shift = 30;
        break;
      default:
        break;
    }
    if (shift != 0) digits.remove_suffix(1);
  }
  const std::optional<uint64_t> value = parse_unsigned(digits, kMax >> shift);
  if (!value) {
    throw bad_value(option, text,
                    "expected a byte count: digits with an optional K, M or G suffix (x1024), "
                    "e.g. 8, 512K, 64M, below 2^63");
  }
  return static_cast<size_t>(*value << shift);
}

std::vector<std::string> parse_axes(std::string_view text, const Mesh& mesh) {
  if (text.empty()) return mesh.abstract_mesh().axis_names();
  std::vector<std::string> axes;
  for (std::string_view name : split(text, ',')) axes.emplace_back(name);
  try {
    axis_size(mesh.abstract_mesh(), axes);  // unknown or repeated axes
  } catch (const Error& e) {
    throw bad_value("--axes", text, e.message());
  }
  return axes;
}

BenchCommand::BenchCommand(CLI::App& bench) {
  bench
      .add_option("collective", collective_, "What to run: " + collective_names() + " (see below)")
      ->required();
  bench.add_option("--mesh", mesh_, "Devices: a count (one axis x) or NAME=SIZE,... e.g. x=4,y=2")
      ->capture_default_str();
  bench.add_option("--axes", axes_, "Axes the collective runs over, e.g. x,y (default: all)");
  bench.add_option("-b,--minbytes", min_bytes_, "Smallest size (suffixes K, M, G = 1024^k)")
      ->capture_default_str();
  bench.add_option("-e,--maxbytes", max_bytes_, "Largest size (suffixes K, M, G)")
      ->capture_default_str();
  bench.add_option("-f,--stepfactor", step_factor_, "Multiply the size by this between rows")
      ->capture_default_str();
  bench
      .add_option("--dtype", dtype_,
                  "Element type: bool, int8, int32, int64, uint8, uint32, "
                  "float16, bfloat16, float32, float64")
      ->capture_default_str();
  bench
      .add_option("--op", op_,
                  "Reduction of all_reduce: sum, max or min (reduce_scatter: sum only)")
      ->capture_default_str();
  bench.add_option("--iters", iters_, "Timed calls per size")->capture_default_str();
  bench.add_option("--warmup", warmup_, "Untimed calls per size before them")
      ->capture_default_str();
  bench.add_flag("--check", check_,
                 "Compare every result of every call with a sequential reference; count "
                 "wrong elements");
  bench.add_option("--algo", algo_,
                   "Algorithm: a name `meshsim algorithms` lists for the collective, auto (least "
                   "modelled cost), or all (every applicable one, side by side); default: the "
                   "runtime's choice (MESHSIM_ALGO, else direct)");
  bench.add_option("--format", format_, "Output: table, json or csv")->capture_default_str();
  bench.add_option("--timeout-ms", timeout_ms_, "Launch timeout in ms (0: none)")
      ->capture_default_str();
  bench.add_option("--exec", exec_,
                   "How devices run: threads (an OS thread each) or fibers (fibers on a few "
                   "worker threads, one per usable core); default: MESHSIM_EXEC, else threads "
                   "when every device of the mesh has a usable core and fibers when not");
  bench.add_option("--bind", bind_,
                   "Bind each device thread (threads) or worker (fibers) to a CPU of its own: "
                   "cores or none; default: MESHSIM_BIND, else cores when there are 2 to nproc "
                   "such threads");
  bench.add_option("--topology", topology_,
                   "Also model one call per size on this network: a JSON file or a spec such as "
                   "ring:bw=50GB/s,lat=500ns (see below); adds modeled time and busbw columns");
  network_option_ = add_network_option(bench, network_);
  bench.add_option("--trace", trace_,
                   "Write a Chrome / Perfetto trace of one call at the largest size to this file");
  bench.add_option("--root", root_, "pbroadcast: the source rank")->capture_default_str();
  bench.add_option("--seed", seed_, "ragged_all_to_all: seed of the send sizes")
      ->capture_default_str();
  bench.footer(bench_help_footer());
}

BenchOptions BenchCommand::options() const {
  BenchOptions o;
  o.collective = find_collective(collective_);
  if (o.collective == nullptr) {
    throw bad_value("collective", collective_, "unknown; choose one of " + collective_names());
  }
  const Collective& c = *o.collective;
  o.mesh = parse_mesh(mesh_);
  o.axes = parse_axes(axes_, o.mesh);

  o.min_bytes = parse_bytes(min_bytes_, "-b/--minbytes");
  o.max_bytes = parse_bytes(max_bytes_, "-e/--maxbytes");
  if (o.min_bytes == 0) throw bad_value("-b/--minbytes", min_bytes_, "must be at least 1");
  if (o.max_bytes < o.min_bytes) {
    throw bad_value("-e/--maxbytes", max_bytes_,
                    "is below -b/--minbytes " + std::to_string(o.min_bytes));
  }
  // Each device holds an input and an output of up to the largest size, and
  // the memcpy reference two buffers of at most 512 MiB: refuse a sweep this
  // machine cannot hold, instead of swapping or being killed halfway.
  const double largest = static_cast<double>(o.max_bytes);
  const double needed = 2.0 * o.mesh.size() * largest +
                        2 * std::min(o.mesh.size() * largest, double{1 << 29});
  const double physical =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (physical > 0 && needed > physical) {
    constexpr double kGiB = double{1 << 30};
    throw bad_value("-e/--maxbytes", max_bytes_,
                    "needs about " + std::to_string(static_cast<int64_t>(needed / kGiB)) +
                        " GiB (2 x " + std::to_string(o.mesh.size()) +
                        " devices x the size, and the memcpy reference), more than the " +
                        std::to_string(static_cast<int64_t>(physical / kGiB)) +
                        " GiB of memory this machine has");
  }
  require_at_least("-f/--stepfactor", step_factor_, 2);
  o.step_factor = step_factor_;

  try {
    o.params.dtype = parse_dtype(dtype_);
  } catch (const Error& e) {
    throw bad_value("--dtype", dtype_, e.message());
  }
  o.params.op = parse_op(op_);
  if (c.reduces == Reduces::kSumOnly && o.params.op != ReduceOp::kSum) {
    throw bad_value("--op", op_, std::string(c.name) + " reduces with sum only");
  }
  require_at_least("--iters", iters_, 1);
  o.iters = iters_;
  require_at_least("--warmup", warmup_, 0);
  o.warmup = warmup_;
  o.check = check_;

  const std::vector<std::string> choices = algorithm_choices(c);
  if (!algo_.empty() && std::find(choices.begin(), choices.end(), algo_) == choices.end()) {
    std::string known;
    for (const std::string& a : choices) known += (known.empty() ? "" : ", ") + a;
    throw bad_value("--algo", algo_,
                    "not an algorithm of " + std::string(c.name) + "; available: " + known);
  }
  o.algo = algo_;
  o.format = parse_format(format_);
  if (exec_) {
    try {
      o.exec = parse_execution_mode(*exec_);
    } catch (const InvalidArgumentError&) {
      throw bad_value("--exec", *exec_, "choose threads or fibers");
    }
  } else if (execution_mode_variable() == nullptr) {
    // Devices that outnumber the cores meet in user space on fibers, many
    // times faster than OS threads that must yield to each other (the README's
    // execution modes); where each has a core, threads spin and are faster.
    o.exec = o.mesh.size() > usable_cores() ? ExecutionMode::kFibers : ExecutionMode::kThreads;
  }
  if (bind_ == "cores" || bind_ == "none") {
    o.bind = bind_ == "cores";
  } else if (bind_) {
    throw bad_value("--bind", *bind_, "choose cores or none");
  }
  require_at_least("--timeout-ms", timeout_ms_, 0);
  o.timeout = std::chrono::milliseconds(timeout_ms_);

  if (c.rooted && (root_ < 0 || root_ >= o.group_size())) {
    throw bad_value("--root", std::to_string(root_),
                    "out of range [0, " + std::to_string(o.group_size()) + ") for " +
                        std::string(c.name) + " over groups of " + std::to_string(o.group_size()) +
                        " devices");
  }
  o.params.root = root_;
  require_at_least("--seed", seed_, 0);  // an unsigned option would take -1 as 2^64 - 1
  o.params.seed = static_cast<uint64_t>(seed_);
  if (!topology_.empty()) {
    o.time = parse_topology_option(topology_, o.mesh, network_);
    o.topology_text = topology_;
    o.network = network_;
  } else if (network_option_->count() > 0) {
    throw bad_value("--network", network_, "models a --topology, and none is given");
  }
  if (trace_) {
    check_output_path("--trace", *trace_);  // now, not after a long sweep
    o.trace_path = *trace_;
  }
  return o;
}

BenchOptions parse_bench_args(std::vector<std::string> args) {
  CLI::App app("meshsim bench");
  BenchCommand command(app);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last-first
  app.parse(args);
  return command.options();
}

}  // namespace meshsim::cli
