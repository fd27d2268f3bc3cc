// meshsim: the command-line tool. `meshsim bench <collective>` benchmarks a
// collective on a simulated mesh in the nccl-tests convention (see
// `meshsim bench --help`); `meshsim algorithms` lists the algorithms each
// collective can run; `meshsim layout` draws which devices hold which block
// of an array under a sharding; `meshsim trace` writes the Perfetto trace of
// a small sharded training step in virtual time.

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <iostream>

#include "meshsim/mesh/error.h"
#include "tools/algorithms_command.h"
#include "tools/bench_options.h"
#include "tools/bench_run.h"
#include "tools/layout_command.h"
#include "tools/trace_command.h"

namespace {

constexpr int kExitFailed = 1;    // a wrong result or a failed launch
constexpr int kExitBadUsage = 2;  // a bad command line

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("meshsim: a mesh of simulated accelerator devices in one process");
  app.require_subcommand(1);
  CLI::App* bench = app.add_subcommand(
      "bench", "Benchmark a collective over a sweep of sizes (nccl-tests style)");
  meshsim::cli::BenchCommand command(*bench);
  CLI::App* layout = app.add_subcommand(
      "layout", "Draw which devices hold which block of a 1-D or 2-D array under a sharding");
  meshsim::cli::LayoutCommand layout_command(*layout);
  CLI::App* algorithms = app.add_subcommand(
      "algorithms", "List every collective's algorithms: preconditions, cost, tunables");
  meshsim::cli::AlgorithmsCommand algorithms_command(*algorithms);
  CLI::App* trace = app.add_subcommand(
      "trace", "Run a small sharded training step in virtual time and write its Perfetto trace");
  meshsim::cli::TraceCommand trace_command(*trace);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitBadUsage;  // --help exits 0
  }

  if (layout->parsed()) {
    try {
      meshsim::cli::run_layout(layout_command.options(), std::cout);
      return 0;
    } catch (const meshsim::Error& e) {
      std::cerr << "meshsim layout: " << e.what() << "\n";
      return kExitBadUsage;
    }
  }

  if (algorithms->parsed()) {
    try {
      meshsim::cli::run_algorithms(algorithms_command.options(), std::cout);
      return 0;
    } catch (const meshsim::Error& e) {
      std::cerr << "meshsim algorithms: " << e.what() << "\n";
      return kExitBadUsage;
    }
  }

  if (trace->parsed()) {
    meshsim::cli::TraceOptions trace_options;
    try {
      trace_options = trace_command.options();
    } catch (const meshsim::Error& e) {
      std::cerr << "meshsim trace: " << e.what() << "\n";
      return kExitBadUsage;
    }
    try {
      meshsim::cli::run_trace(trace_options, std::cout);
      return 0;
    } catch (const std::exception& e) {
      std::cerr << "meshsim trace: failed: " << e.what() << "\n";
      return kExitFailed;
    }
  }

  meshsim::cli::BenchOptions options;
  try {
    options = command.options();
  } catch (const meshsim::Error& e) {
    std::cerr << "meshsim bench: " << e.what() << "\n";
    return kExitBadUsage;
  }
  try {
    return meshsim::cli::run_bench(options, std::cout,
                                   isatty(STDERR_FILENO) ? &std::cerr : nullptr);
  } catch (const std::exception& e) {
    std::cerr << "meshsim bench: failed: " << e.what() << "\n";
    return kExitFailed;
  }
}
