#pragma once
// The MESHSIM_ALGO rule syntax (registry.h):
//   "psum:rabenseifner:0-64K,ring:64K-;all_gather:bruck"
// Only the syntax is checked here; names are checked when a rule is used, so
// the environment may name algorithms registered later.

#include <array>
#include <string_view>
#include <vector>

#include "meshsim/collectives/algorithms/internal/registry_tables.h"

namespace meshsim {

// Whether `name` is spelled as an algorithm name: non-empty, [a-z0-9_-].
bool is_algorithm_name(std::string_view name);

// The rules of `spec` by collective. InvalidArgumentError naming the part
// that does not parse.
std::array<std::vector<ParsedRule>, RegistryTables::kCollectives> parse_rules(std::string_view spec);

}  // namespace meshsim
