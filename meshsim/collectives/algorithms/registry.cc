#include "meshsim/collectives/algorithms/registry.h"

#include <cstdlib>
#include <string>

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/registry_tables.h"
#include "meshsim/collectives/algorithms/internal/rule_parser.h"
#include "meshsim/mesh/internal/format.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"

namespace meshsim {
namespace {

// `c`, if it names a collective; else InvalidArgumentError naming `what`.
Collective checked(Collective c, const char* what) {
  if (static_cast<size_t>(c) >= RegistryTables::kCollectives) {
    throw InvalidArgumentError(std::string(what) + ": " + std::to_string(static_cast<int>(c)) +
                               " is not a Collective");
  }
  return c;
}

// The per-runtime state of the collectives layer.
struct CollectivesExtension : RuntimeExtension {
  AlgorithmRegistry registry;
};

}  // namespace

const RegistryEntry* RegistryTables::find(Collective c, std::string_view name) const {
  for (const RegistryEntry& e : of(c)) {
    if (e.info->name == name) return &e;
  }
  return nullptr;
}

AlgorithmRegistry::AlgorithmRegistry() : tables_(std::make_unique<RegistryTables>()) {
  register_builtin_algorithms(*this);
  // A spec that does not parse fails every call, not the registry: the
  // program may still replace it (set_environment_rules).
  if (const char* spec = std::getenv("MESHSIM_ALGO"); spec != nullptr && *spec != '\0') {
    try {
      tables_->environment_rules = parse_rules(spec);
      for (auto& rules : tables_->environment_rules) tables_->label(rules);
    } catch (const InvalidArgumentError& e) {
      tables_->environment_error = std::string("MESHSIM_ALGO: ") + e.what();
    }
  }
  tables_->refresh_has_rules();
}

AlgorithmRegistry::~AlgorithmRegistry() = default;

void AlgorithmRegistry::mutate(const char* what, const std::function<void()>& change) {
  if (owner_ == nullptr) {
    change();
    return;
  }
  owner_->while_idle(what, change);
}

void AlgorithmRegistry::read(const std::function<void()>& read) const {
  if (owner_ == nullptr) {
    read();
    return;
  }
  owner_->without_changes(read);
}

template <class Args>
void AlgorithmRegistry::add_entry(Collective collective, Algorithm<Args> algorithm, bool builtin) {
  const std::string name = algorithm.name;
  if (!is_algorithm_name(name) || name == "auto") {
    throw InvalidArgumentError("algorithm name " + quote_text(name) + " for " +
                               std::string(collective_name(collective)) + ": names are 1 to " +
                               std::to_string(kMaxAlgorithmName) +
                               " characters of [a-z0-9_-], and not 'auto'");
  }
  if (!builtin && !algorithm.run) {
    throw InvalidArgumentError("algorithm '" + name + "' for " +
                               std::string(collective_name(collective)) + " has no run function");
  }
  mutate("AlgorithmRegistry::add", [&] {
    if (tables_->find(collective, name) != nullptr) {
      throw InvalidArgumentError("algorithm '" + name + "' is already registered for " +
                                 std::string(collective_name(collective)));
    }
    RegistryEntry entry;
    entry.collective = collective;
    entry.args_type = &typeid(Args);
    if (algorithm.run) {
      entry.run = [run = std::move(algorithm.run)](Communicator& comm, const void* args) {
        run(comm, *static_cast<const Args*>(args));
      };
    }
    for (const Tunable& t : algorithm.tunables) entry.tunable_values.push_back(t.default_value);
    entry.info = std::make_shared<Algorithm<Args>>(std::move(algorithm));
    tables_->of(collective).push_back(std::move(entry));
  });
}

void AlgorithmRegistry::add(Algorithm<AllReduceArgs> a) { add_entry(Collective::kAllReduce, std::move(a), false); }
void AlgorithmRegistry::add(Algorithm<AllGatherArgs> a) { add_entry(Collective::kAllGather, std::move(a), false); }
void AlgorithmRegistry::add(Algorithm<ReduceScatterArgs> a) { add_entry(Collective::kReduceScatter, std::move(a), false); }
void AlgorithmRegistry::add(Algorithm<AllToAllArgs> a) { add_entry(Collective::kAllToAll, std::move(a), false); }
void AlgorithmRegistry::add(Algorithm<RaggedAllToAllArgs> a) { add_entry(Collective::kRaggedAllToAll, std::move(a), false); }
void AlgorithmRegistry::add(Algorithm<BroadcastArgs> a) { add_entry(Collective::kBroadcast, std::move(a), false); }
void AlgorithmRegistry::add(Algorithm<BarrierArgs> a) { add_entry(Collective::kBarrier, std::move(a), false); }

void AlgorithmRegistry::add_builtin(Algorithm<AllReduceArgs> a) { add_entry(Collective::kAllReduce, std::move(a), true); }
void AlgorithmRegistry::add_builtin(Algorithm<AllGatherArgs> a) { add_entry(Collective::kAllGather, std::move(a), true); }
void AlgorithmRegistry::add_builtin(Algorithm<ReduceScatterArgs> a) { add_entry(Collective::kReduceScatter, std::move(a), true); }
void AlgorithmRegistry::add_builtin(Algorithm<AllToAllArgs> a) { add_entry(Collective::kAllToAll, std::move(a), true); }
void AlgorithmRegistry::add_builtin(Algorithm<RaggedAllToAllArgs> a) { add_entry(Collective::kRaggedAllToAll, std::move(a), true); }
void AlgorithmRegistry::add_builtin(Algorithm<BroadcastArgs> a) { add_entry(Collective::kBroadcast, std::move(a), true); }
void AlgorithmRegistry::add_builtin(Algorithm<BarrierArgs> a) { add_entry(Collective::kBarrier, std::move(a), true); }

void AlgorithmRegistry::add_rule(AlgorithmRule rule) {
  checked(rule.collective, "AlgorithmRegistry::add_rule");
  if (rule.algorithm != "auto" && tables_->find(rule.collective, rule.algorithm) == nullptr) {
    throw UnknownAlgorithmError("rule for " + std::string(collective_name(rule.collective)) +
                                ": unknown algorithm " + quote_text(rule.algorithm) + "; valid: " +
                                valid_names(rule.collective));
  }
  mutate("AlgorithmRegistry::add_rule", [&] {
    auto& rules = tables_->rules[static_cast<size_t>(rule.collective)];
    ParsedRule parsed{rule, "rule " + std::to_string(rules.size() + 1), {}};
    parsed.label = tables_->labels.emplace_back(parsed.text);
    rules.push_back(std::move(parsed));
    tables_->refresh_has_rules();
  });
}

void AlgorithmRegistry::clear_rules() {
  mutate("AlgorithmRegistry::clear_rules", [&] {
    for (auto& rules : tables_->rules) rules.clear();
    tables_->refresh_has_rules();
  });
}

void AlgorithmRegistry::set_environment_rules(std::string_view spec) {
  auto parsed = parse_rules(spec);
  mutate("AlgorithmRegistry::set_environment_rules", [&] {
    for (auto& rules : parsed) tables_->label(rules);
    tables_->environment_rules = std::move(parsed);
    tables_->environment_error.clear();
    tables_->refresh_has_rules();
  });
}

void AlgorithmRegistry::set_tunable(Collective collective, std::string_view algorithm,
                                    std::string_view name, int64_t value) {
  checked(collective, "AlgorithmRegistry::set_tunable");
  mutate("AlgorithmRegistry::set_tunable", [&] {
    for (RegistryEntry& e : tables_->of(collective)) {
      if (e.info->name != algorithm) continue;
      for (size_t i = 0; i < e.info->tunables.size(); ++i) {
        if (e.info->tunables[i].name == name) {
          e.tunable_values[i] = value;
          return;
        }
      }
      throw InvalidArgumentError("algorithm " + quote_text(algorithm) + " of " +
                                 std::string(collective_name(collective)) + " has no tunable " +
                                 quote_text(name));
    }
    throw UnknownAlgorithmError(std::string(collective_name(collective)) +
                                ": unknown algorithm " + quote_text(algorithm) +
                                "; valid: " + valid_names(collective));
  });
}

void AlgorithmRegistry::set_fallback(bool fallback) {
  mutate("AlgorithmRegistry::set_fallback", [&] { tables_->fallback = fallback; });
}

void AlgorithmRegistry::set_cost_model(const CostModel& model) {
  mutate("AlgorithmRegistry::set_cost_model", [&] { tables_->cost_model = model; });
}

CostModel AlgorithmRegistry::cost_model() const {
  CostModel model;
  read([&] { model = tables_->cost_model; });
  return model;
}

std::vector<const AlgorithmInfo*> AlgorithmRegistry::list(Collective collective) const {
  checked(collective, "AlgorithmRegistry::list");
  std::vector<const AlgorithmInfo*> out;
  read([&] {
    for (const RegistryEntry& e : tables_->of(collective)) out.push_back(e.info.get());
  });
  return out;
}

const AlgorithmInfo* AlgorithmRegistry::find(Collective collective, std::string_view name) const {
  checked(collective, "AlgorithmRegistry::find");
  const RegistryEntry* e = nullptr;
  read([&] { e = tables_->find(collective, name); });
  return e != nullptr ? e->info.get() : nullptr;
}

std::vector<const AlgorithmInfo*> AlgorithmRegistry::applicable(const CallShape& shape) const {
  // The user's checks run outside the lock (they may call back into the
  // registry); an AlgorithmInfo never changes or moves once added.
  checked(shape.collective, "AlgorithmRegistry::applicable");
  std::vector<const AlgorithmInfo*> out;
  for (const AlgorithmInfo* info : list(shape.collective)) {
    if (!unmet_precondition(info->preconditions, shape).empty()) continue;
    if (info->check && !info->check(shape).empty()) continue;
    out.push_back(info);
  }
  return out;
}

std::string AlgorithmRegistry::valid_names(Collective collective) const {
  checked(collective, "AlgorithmRegistry::valid_names");
  std::string out;
  read([&] {
    for (const RegistryEntry& e : tables_->of(collective)) {
      out += (out.empty() ? "" : ", ") + e.info->name;
    }
  });
  return out + ", auto";
}

AlgorithmRegistry& registry_of(RuntimeImpl& runtime) {
  auto& ext = static_cast<CollectivesExtension&>(runtime.extension([&] {
    auto made = std::make_unique<CollectivesExtension>();
    made->registry.set_owner(&runtime);
    return std::unique_ptr<RuntimeExtension>(std::move(made));
  }));
  return ext.registry;
}

AlgorithmRegistry& algorithm_registry(Runtime& runtime) {
  return registry_of(RuntimeHooks::impl(runtime));
}

}  // namespace meshsim
