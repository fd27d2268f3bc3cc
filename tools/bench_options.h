#pragma once
// The options of `meshsim bench`: CLI11 reads the command line into strings
// and integers, and BenchCommand::options() turns them into BenchOptions,
// rejecting every bad value with an InvalidArgumentError that names the
// option and the value (so main can print it and exit 2).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/exec/runtime.h"
#include "tools/cli_parse.h"
#include "tools/bench_collectives.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace meshsim::cli {

enum class OutputFormat { kTable, kJson, kCsv };

struct BenchOptions {
  const Collective* collective = nullptr;
  Mesh mesh = Mesh::make({{"x", 8}});
  // The collective's axes, major-to-minor; all of the mesh's by default.
  std::vector<std::string> axes = {"x"};
  size_t min_bytes = 8;
  size_t max_bytes = size_t{64} << 20;
  int step_factor = 2;
  BenchParams params;
  int iters = 20;
  int warmup = 5;
  bool check = false;
  // A registered name, "auto", "all" (every applicable algorithm, side by
  // side), or "" for the runtime's choice (MESHSIM_ALGO, else direct).
  std::string algo;
  OutputFormat format = OutputFormat::kTable;
  std::chrono::milliseconds timeout{60000};
  // How the runtime runs the devices (--exec; without it, threads when the mesh
  // has no more devices than usable cores, else fibers); unset only when
  // MESHSIM_EXEC is set and not empty, which the runtime then reads.
  std::optional<ExecutionMode> exec;
  // Whether the runtime binds its threads to CPUs (--bind cores|none); unset:
  // the runtime's choice (RuntimeOptions::bind_threads).
  std::optional<bool> bind;
  // --topology: each size also runs one call in virtual time on a model
  // (--network) of this topology (mesh position p on node p); topology_text
  // is what the user gave. Null: no modeled columns.
  std::shared_ptr<const VirtualTime> time;
  std::string topology_text;
  std::string network;  // "congestion-unaware" or "congestion-aware"
  // --trace: where to write the Chrome trace of one call at the sweep's
  // largest size (in virtual time too with --topology); empty: none.
  std::string trace_path;

  // Devices per group: the product of the axes' sizes.
  int group_size() const;
};

// "8", "512K", "64M", "2G" (K = 1024, as nccl-tests; k, m, g too). `option`
// names the option in the error for anything else, or a value past 2^63.
size_t parse_bytes(std::string_view text, std::string_view option);
// What --algo accepts for `collective`: the algorithms a fresh runtime's
// registry lists for its kind, then "auto" and "all"; just "direct" for a
// collective without a kind.
std::vector<std::string> algorithm_choices(const Collective& collective);
// "x,y": axes of `mesh`, each once; "" gives all of them.
std::vector<std::string> parse_axes(std::string_view text, const Mesh& mesh);

// Registers the options and the positional collective on the `bench`
// subcommand (and its --help text). After CLI11 has parsed the command line,
// options() validates what it read. The object must outlive the parse: CLI11
// writes into it.
class BenchCommand {
 public:
  explicit BenchCommand(CLI::App& bench);
  BenchCommand(const BenchCommand&) = delete;
  BenchCommand& operator=(const BenchCommand&) = delete;

  BenchOptions options() const;

 private:
  std::string collective_;
  std::string mesh_ = "8";
  std::string axes_;
  std::string min_bytes_ = "8";
  std::string max_bytes_ = "64M";
  int step_factor_ = 2;
  std::string dtype_ = "float32";
  std::string op_ = "sum";
  int iters_ = 20;
  int warmup_ = 5;
  bool check_ = false;
  std::string algo_;
  std::string format_ = "table";
  std::optional<std::string> exec_;  // unset: not given (given empty is an error)
  std::optional<std::string> bind_;
  int64_t timeout_ms_ = 60000;
  std::string topology_;
  std::string network_ = "congestion-unaware";
  // --network, whose count() says whether it was given: it means nothing
  // without --topology.
  CLI::Option* network_option_ = nullptr;
  std::optional<std::string> trace_;  // unset: not given (given empty is an error)
  int root_ = 0;
  int64_t seed_ = 1;
};

// Parses the arguments that follow "bench" as main does. Throws
// CLI::ParseError for what CLI11 rejects (an unknown option, a non-integer
// --iters) and InvalidArgumentError for bad values.
BenchOptions parse_bench_args(std::vector<std::string> args);

}  // namespace meshsim::cli
