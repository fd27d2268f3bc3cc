#include "tools/algorithms_command.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <vector>

#include "meshsim/runtime/exec/runtime.h"
#include "tools/cli_parse.h"

namespace meshsim::cli {
namespace {

// The columns of a line, as the table prints them.
constexpr size_t kColumns = 6;
using Line = std::array<std::string, kColumns>;

std::string tunables_text(const AlgorithmInfo& info) {
  std::string text;
  for (const Tunable& t : info.tunables) {
    text += fmt::format("{}{}={}", text.empty() ? "" : ", ", t.name, t.default_value);
  }
  return text.empty() ? "-" : text;
}

std::vector<meshsim::Collective> chosen_collectives(const AlgorithmsOptions& options) {
  if (options.collective) return {*options.collective};
  return {std::begin(kAllCollectives), std::end(kAllCollectives)};
}

// Characters on screen: cost formulas hold UTF-8 (α, β, γ, ·), one column
// each, so continuation bytes do not count.
size_t display_width(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  }));
}

void write_table(const std::vector<Line>& lines, std::ostream& out) {
  std::array<size_t, kColumns> widths{};
  for (const Line& line : lines) {
    for (size_t c = 0; c < kColumns; ++c) widths[c] = std::max(widths[c], display_width(line[c]));
  }
  for (const Line& line : lines) {
    std::string text;
    for (size_t c = 0; c < kColumns; ++c) {
      text += line[c];
      if (c + 1 < kColumns) text += std::string(widths[c] - display_width(line[c]) + 2, ' ');
    }
    out << text << '\n';
  }
}

void write_json(const AlgorithmRegistry& registry, const std::vector<meshsim::Collective>& chosen,
                std::ostream& out) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (meshsim::Collective c : chosen) {
    for (const AlgorithmInfo* info : registry.list(c)) {
      nlohmann::ordered_json tunables = nlohmann::ordered_json::array();
      for (const Tunable& t : info->tunables) {
        tunables.push_back(
            {{"name", t.name}, {"default", t.default_value}, {"description", t.description}});
      }
      list.push_back({{"collective", collective_name(c)},
                      {"name", info->name},
                      {"preconditions", describe_preconditions(info->preconditions)},
                      {"cost_formula", info->cost_formula},
                      {"tunables", std::move(tunables)},
                      {"description", info->description}});
    }
  }
  out << list.dump(2) << '\n';
}

}  // namespace

AlgorithmsCommand::AlgorithmsCommand(CLI::App& algorithms) {
  algorithms.add_option("--collective", collective_,
                        "Only this collective: all_reduce, all_gather, reduce_scatter, "
                        "all_to_all, ragged_all_to_all, broadcast, barrier, or a front-end's "
                        "name (psum, pmax, pmin, pmean, psum_scatter, pbroadcast)");
  algorithms.add_option("--format", format_, "Output: table or json")->capture_default_str();
}

AlgorithmsOptions AlgorithmsCommand::options() const {
  AlgorithmsOptions o;
  if (collective_) {  // given, even empty: an empty name is unknown, not "all"
    meshsim::Collective c;
    if (!collective_from_name(*collective_, c)) {
      std::string names;
      for (meshsim::Collective known : kAllCollectives) {
        names += (names.empty() ? "" : ", ") + std::string(collective_name(known));
      }
      throw bad_value("--collective", *collective_,
                      "unknown; choose one of " + names +
                          " or a front-end's name (ppermute and psend/precv have one schedule "
                          "each, so no algorithms)");
    }
    o.collective = c;
  }
  if (format_ == "json") {
    o.format = ListFormat::kJson;
  } else if (format_ != "table") {
    throw bad_value("--format", format_, "choose table or json");
  }
  return o;
}

void write_algorithms(const AlgorithmRegistry& registry, const AlgorithmsOptions& options,
                      std::ostream& out) {
  const std::vector<meshsim::Collective> chosen = chosen_collectives(options);
  if (options.format == ListFormat::kJson) {
    write_json(registry, chosen, out);
    return;
  }
  std::vector<Line> lines = {
      {"collective", "name", "preconditions", "cost", "tunables", "description"}};
  for (meshsim::Collective c : chosen) {
    for (const AlgorithmInfo* info : registry.list(c)) {
      lines.push_back({std::string(collective_name(c)), info->name,
                       describe_preconditions(info->preconditions), info->cost_formula,
                       tunables_text(*info), info->description});
    }
  }
  write_table(lines, out);
}

void run_algorithms(const AlgorithmsOptions& options, std::ostream& out) {
  Runtime fresh(registry_only_runtime());
  write_algorithms(algorithm_registry(fresh), options, out);
}

RuntimeOptions registry_only_runtime() {
  RuntimeOptions options;
  options.max_devices = 1;
  options.execution = ExecutionMode::kThreads;
  options.bind_threads = false;
  return options;
}

}  // namespace meshsim::cli
