#include "meshsim/collectives/algorithms/internal/selection.h"

#include <limits>
#include <string>

#include "meshsim/collectives/algorithms/registry.h"
#include "meshsim/mesh/internal/format.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"

namespace meshsim {
namespace {

bool matches(const AlgorithmRule& rule, const CallShape& shape) {
  if (rule.min_group != 0 && shape.group_size < rule.min_group) return false;
  if (rule.max_group != 0 && shape.group_size >= rule.max_group) return false;
  if (shape.bytes < rule.min_bytes) return false;
  if (rule.max_bytes != 0 && shape.bytes >= rule.max_bytes) return false;
  return true;
}

std::string unmet(const RegistryEntry& e, const CallShape& shape) {
  std::string why = unmet_precondition(e.info->preconditions, shape);
  if (why.empty() && e.info->check) why = e.info->check(shape);
  return why;
}

// The applicable entry of least modeled time (ties: registration order, so
// direct wins them).
const RegistryEntry& cheapest(const RegistryTables& t, const CallShape& shape) {
  const RegistryEntry* best = nullptr;
  double best_time = std::numeric_limits<double>::infinity();
  for (const RegistryEntry& e : t.of(shape.collective)) {
    if (!e.info->cost || !unmet(e, shape).empty()) continue;
    const double time = t.cost_model.time_us(e.info->cost(shape));
    if (time < best_time) {
      best = &e;
      best_time = time;
    }
  }
  return best != nullptr ? *best : t.of(shape.collective).front();
}

class Chooser {
 public:
  Chooser(DeviceContext& ctx, AlgorithmRegistry& registry, const char* front_end,
          const AxisNames& axes, const CallShape& shape)
      : ctx_(ctx), registry_(registry), t_(registry.tables()), front_end_(front_end),
        axes_(axes), shape_(shape) {}

  AlgorithmChoice resolve(std::string_view name, std::string_view why) {
    if (name == "auto") return done(cheapest(t_, shape_), "auto");
    const RegistryEntry* e = t_.find(shape_.collective, name);
    if (e == nullptr) {
      throw UnknownAlgorithmError(prefix() + "unknown algorithm " + quote_text(name) + " for " +
                                  std::string(collective_name(shape_.collective)) + " (chosen by " +
                                  std::string(why) + "); valid: " +
                                  registry_.valid_names(shape_.collective));
    }
    const std::string reason = unmet(*e, shape_);
    if (reason.empty()) return done(*e, why);
    if (!t_.fallback) {
      throw AlgorithmPreconditionError(prefix() + "algorithm " + quote_text(name) +
                                       " (chosen by " + std::string(why) + ") requires " +
                                       reason);
    }
    DeviceHooks::runtime(ctx_).logger().warn("{}algorithm '{}' requires {}; running direct",
                                             prefix(), name, reason);
    return done(t_.of(shape_.collective).front(), "fallback");
  }

  AlgorithmChoice done(const RegistryEntry& e, std::string_view why) {
    DeviceHooks::record(ctx_, [&] {
      return CollectiveRecord{front_end_, e.info->name, why, shape_.group_size, shape_.bytes};
    });
    return {&e, e.info->name.c_str()};
  }

 private:
  std::string prefix() const {
    return std::string(front_end_) + " over " + axes_.to_string() + ": ";
  }

  DeviceContext& ctx_;
  AlgorithmRegistry& registry_;
  const RegistryTables& t_;
  const char* front_end_;
  const AxisNames& axes_;
  const CallShape& shape_;
};

}  // namespace

AlgorithmChoice choose_algorithm(DeviceContext& ctx, const char* front_end, const AxisNames& axes,
                                 const CallShape& shape, std::string_view requested) {
  AlgorithmRegistry& registry = registry_of(DeviceHooks::runtime(ctx));
  const RegistryTables& t = registry.tables();
  if (requested.empty() && !t.has_rules(shape.collective)) {  // the common case, kept short
    const RegistryEntry& direct = t.of(shape.collective).front();
    DeviceHooks::record(ctx, [&] {
      return CollectiveRecord{front_end, direct.info->name, "default", shape.group_size,
                              shape.bytes};
    });
    return {&direct, direct.info->name.c_str()};
  }
  if (!t.environment_error.empty()) throw InvalidArgumentError(t.environment_error);
  Chooser chooser(ctx, registry, front_end, axes, shape);
  if (!requested.empty()) return chooser.resolve(requested, "call");
  const size_t c = static_cast<size_t>(shape.collective);
  for (const auto* rules : {&t.environment_rules[c], &t.rules[c]}) {
    for (const ParsedRule& r : *rules) {
      if (matches(r.rule, shape)) return chooser.resolve(r.rule.algorithm, r.label);
    }
  }
  return chooser.done(t.of(shape.collective).front(), "default");  // no rule matched
}

}  // namespace meshsim
