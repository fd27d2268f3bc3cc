#pragma once
// RegistryTables: what an AlgorithmRegistry holds — per collective its
// entries, the rules that choose among them, and the settings. Read without a
// lock by device threads (the registry changes only while no launch runs).

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "meshsim/collectives/algorithms/algorithm.h"
#include "meshsim/collectives/algorithms/registry.h"

namespace meshsim {

struct RegistryEntry {
  Collective collective;
  std::unique_ptr<AlgorithmInfo> info;  // an Algorithm<Args>
  // Runs the algorithm on flat Args of the collective's type (null for
  // direct, which front-ends run natively).
  std::function<void(Communicator&, const void* args)> run;
  const std::type_info* args_type = nullptr;
  std::vector<int64_t> tunable_values;  // parallel to info->tunables
  bool is_direct() const { return !run; }
};

struct ParsedRule {
  AlgorithmRule rule;
  std::string text;  // what records show as chosen_by
};

struct RegistryTables {
  static constexpr size_t kCollectives = std::size(kAllCollectives);
  // Entries keep their addresses (records and communicators point at them).
  std::array<std::deque<RegistryEntry>, kCollectives> entries;
  std::array<std::vector<ParsedRule>, kCollectives> environment_rules;
  std::array<std::vector<ParsedRule>, kCollectives> rules;
  bool fallback = false;
  CostModel cost_model;

  std::deque<RegistryEntry>& of(Collective c) { return entries[static_cast<size_t>(c)]; }
  const std::deque<RegistryEntry>& of(Collective c) const {
    return entries[static_cast<size_t>(c)];
  }
  const RegistryEntry* find(Collective c, std::string_view name) const;
  // Whether any rule could choose something other than direct.
  bool has_rules(Collective c) const {
    return !environment_rules[static_cast<size_t>(c)].empty() ||
           !rules[static_cast<size_t>(c)].empty();
  }
};

// The registry `runtime` owns, created on first use (thread-safe).
AlgorithmRegistry& registry_of(RuntimeImpl& runtime);

}  // namespace meshsim
