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
  // An Algorithm<Args>; shared_ptr deletes it as what it is (AlgorithmInfo has
  // no virtual destructor, so Algorithm stays an aggregate).
  std::shared_ptr<AlgorithmInfo> info;
  // Runs the algorithm on flat Args of the collective's type (null for
  // direct, which front-ends run natively).
  std::function<void(Communicator&, const void* args)> run;
  const std::type_info* args_type = nullptr;
  std::vector<int64_t> tunable_values;  // parallel to info->tunables
  bool is_direct() const { return !run; }
};

struct ParsedRule {
  AlgorithmRule rule;
  std::string text;
  // `text` kept in RegistryTables::labels: what records show as chosen_by,
  // valid as long as the registry, whatever happens to the rules later.
  std::string_view label;
};

struct RegistryTables {
  static constexpr size_t kCollectives = std::size(kAllCollectives);
  // Entries keep their addresses (records and communicators point at them).
  std::array<std::deque<RegistryEntry>, kCollectives> entries;
  std::array<std::vector<ParsedRule>, kCollectives> environment_rules;
  std::array<std::vector<ParsedRule>, kCollectives> rules;
  bool fallback = false;
  CostModel cost_model;
  // Why MESHSIM_ALGO does not parse (the error every call raises until
  // set_environment_rules replaces it); empty when it parsed or is unset.
  std::string environment_error;
  std::deque<std::string> labels;  // only grows

  // Sets the label of every rule in `rules` (keeping its text in `labels`).
  template <class Rules>
  void label(Rules& rules) {
    for (auto& r : rules) r.label = labels.emplace_back(r.text);
  }

  std::deque<RegistryEntry>& of(Collective c) { return entries[static_cast<size_t>(c)]; }
  const std::deque<RegistryEntry>& of(Collective c) const {
    return entries[static_cast<size_t>(c)];
  }
  const RegistryEntry* find(Collective c, std::string_view name) const;
  // Whether any rule could choose something other than direct (or the
  // environment's rules are in error: the slow path raises it). One byte per
  // call to read: refresh_has_rules() after every change of the rules.
  bool has_rules(Collective c) const { return has_rules_[static_cast<size_t>(c)]; }
  void refresh_has_rules() {
    for (size_t c = 0; c < kCollectives; ++c) {
      has_rules_[c] =
          !environment_rules[c].empty() || !rules[c].empty() || !environment_error.empty();
    }
  }

 private:
  std::array<bool, kCollectives> has_rules_{};
};

// The registry `runtime` owns, created on first use (thread-safe).
AlgorithmRegistry& registry_of(RuntimeImpl& runtime);

}  // namespace meshsim
