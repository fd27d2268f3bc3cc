#pragma once
// The MESHSIM_ALGO rule syntax (registry.h):
//   "psum:rabenseifner:0-64K,ring:64K-;all_gather:bruck"
// Only the syntax is checked here; names are checked when a rule is used, so
// the environment may name algorithms registered later.

#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "meshsim/collectives/algorithms/internal/registry_tables.h"

namespace meshsim {

// Whether `name` is spelled as an algorithm name: 1 to kMaxAlgorithmName
// characters of [a-z0-9_-].
constexpr size_t kMaxAlgorithmName = 64;
bool is_algorithm_name(std::string_view name);

// The rules of `spec` by collective. InvalidArgumentError naming the part
// that does not parse, or a rule longer than kMaxRuleText (a rule's text
// names it in records and messages, so it must stay short).
constexpr size_t kMaxRuleText = 128;
std::array<std::vector<ParsedRule>, RegistryTables::kCollectives> parse_rules(std::string_view spec);

}  // namespace meshsim
