#pragma once
// `meshsim algorithms`: the algorithms a runtime's registry knows, one line
// each: collective, name, declared preconditions, cost formula, tunables
// (name=default) and what it does.
//   meshsim algorithms [--collective all_reduce|psum|...] [--format table|json]

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>
#include <string>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim::cli {

enum class ListFormat { kTable, kJson };

struct AlgorithmsOptions {
  std::optional<meshsim::Collective> collective;  // none: every collective
  ListFormat format = ListFormat::kTable;
};

// Registers the options on the `algorithms` subcommand; options() validates
// what CLI11 read (InvalidArgumentError naming the option). The object must
// outlive the parse: CLI11 writes into it.
class AlgorithmsCommand {
 public:
  explicit AlgorithmsCommand(CLI::App& algorithms);
  AlgorithmsCommand(const AlgorithmsCommand&) = delete;
  AlgorithmsCommand& operator=(const AlgorithmsCommand&) = delete;

  AlgorithmsOptions options() const;

 private:
  std::optional<std::string> collective_;
  std::string format_ = "table";
};

// Writes the algorithms of `registry` (of options.collective, or of every
// collective in kAllCollectives order), each collective's in registration
// order. The table's columns are as wide as their widest entry; json is an
// array of objects with the same fields (tunables with their descriptions).
void write_algorithms(const AlgorithmRegistry& registry, const AlgorithmsOptions& options,
                      std::ostream& out);

// write_algorithms for the registry of a fresh Runtime: the built-ins (and
// nothing MESHSIM_ALGO could add: it only chooses).
void run_algorithms(const AlgorithmsOptions& options, std::ostream& out);

// Options of a runtime made only to read its algorithm registry: one device
// thread, never started, and neither MESHSIM_EXEC nor MESHSIM_BIND read
// (they concern runtimes that run devices, and a command line may be
// overriding them).
RuntimeOptions registry_only_runtime();

}  // namespace meshsim::cli
