#pragma once
// AlgorithmRegistry: the algorithms a Runtime knows for each collective and
// the rules that choose among them. Each Runtime owns one (no static
// registry), created on first use with the built-in algorithms and the rules
// of the MESHSIM_ALGO environment variable.
//
// Choosing, for each call, first match wins:
//   1. the call's own `algorithm` option (a name, or "auto");
//   2. MESHSIM_ALGO, read when the registry is created (one that does not
//      parse makes every call raise InvalidArgumentError naming the part,
//      until set_environment_rules replaces it):
//        "psum:rabenseifner:0-64K,ring:64K-;all_gather:bruck"
//      `;` separates collectives, `,` the rules of one, each
//      NAME[:MIN-MAX] over the per-member bytes (K, M, G suffixes; an open end
//      for no bound; MIN inclusive, MAX exclusive). A collective is named as
//      the registry does or by a front-end (psum, pmax, pmin, pmean:
//      all_reduce; psum_scatter: reduce_scatter; pbroadcast: broadcast);
//   3. the rules added with add_rule, in order;
//   4. "direct".
// "auto" picks the applicable algorithm whose cost (CostModel) is least.
// Every call is recorded with the algorithm that ran and the rule that chose
// it (DeviceContext::collective_records).
//
// A chosen algorithm whose preconditions fail is an AlgorithmPreconditionError
// naming it and the precondition, unless set_fallback(true): then it logs the
// switch and runs "direct". An unknown name is an UnknownAlgorithmError that
// lists the valid ones. Members of a group that choose different algorithms
// fail with CollectiveMismatchError.
//
// Thread safety: lookups run concurrently from device threads without a lock;
// so every change (add, add_rule, set_*) must come while no launch of the
// runtime runs, else RuntimeUsageError.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshsim/collectives/algorithms/algorithm.h"
#include "meshsim/mesh/error.h"

namespace meshsim {

class Runtime;
class RuntimeImpl;
struct RegistryTables;

// A chosen algorithm name no registry entry has.
class UnknownAlgorithmError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};
// A chosen algorithm's declared precondition does not hold for the call.
class AlgorithmPreconditionError : public InvalidArgumentError {
 public:
  using InvalidArgumentError::InvalidArgumentError;
};

// Chooses `algorithm` for calls of `collective` whose group size and
// per-member bytes fall in the given ranges (max exclusive; 0 = no bound).
struct AlgorithmRule {
  Collective collective = Collective::kAllReduce;
  std::string algorithm;  // a name or "auto"
  int min_group = 0, max_group = 0;
  size_t min_bytes = 0, max_bytes = 0;
};

// The constants that turn CostTerms into time for "auto" (microseconds).
struct CostModel {
  double alpha_us = 0.5;              // one point-to-point step
  double beta_us_per_byte = 1.0e-4;   // 10 GB/s per link
  double gamma_us_per_byte = 0.5e-4;  // 20 GB/s reduction
  double time_us(const CostTerms& t) const {
    return alpha_us * t.latency + beta_us_per_byte * t.bytes + gamma_us_per_byte * t.reduced_bytes;
  }
};

class AlgorithmRegistry {
 public:
  AlgorithmRegistry();
  ~AlgorithmRegistry();
  AlgorithmRegistry(const AlgorithmRegistry&) = delete;
  AlgorithmRegistry& operator=(const AlgorithmRegistry&) = delete;

  // Registers a user algorithm. InvalidArgumentError for an empty or taken
  // name (per collective), "auto", a missing run function, or a name with
  // characters other than [a-z0-9_-] or over 64 of them.
  void add(Algorithm<AllReduceArgs> algorithm);
  void add(Algorithm<AllGatherArgs> algorithm);
  void add(Algorithm<ReduceScatterArgs> algorithm);
  void add(Algorithm<AllToAllArgs> algorithm);
  void add(Algorithm<RaggedAllToAllArgs> algorithm);
  void add(Algorithm<BroadcastArgs> algorithm);
  void add(Algorithm<BarrierArgs> algorithm);

  // Appends a rule (step 3 above). UnknownAlgorithmError for a name the
  // collective does not have.
  void add_rule(AlgorithmRule rule);
  void clear_rules();
  // Replaces the environment's rules (step 2) as if MESHSIM_ALGO were `spec`;
  // InvalidArgumentError naming the part that does not parse.
  void set_environment_rules(std::string_view spec);
  // Sets tunable `name` of `algorithm`; InvalidArgumentError if it has none.
  void set_tunable(Collective collective, std::string_view algorithm, std::string_view name,
                   int64_t value);
  void set_fallback(bool fallback);
  void set_cost_model(const CostModel& model);
  CostModel cost_model() const;

  // Every function of the registry taking a Collective (an AlgorithmRule's or a
  // CallShape's included) raises InvalidArgumentError for a value outside
  // the enum.

  // The algorithms of `collective` in registration order (built-ins first).
  std::vector<const AlgorithmInfo*> list(Collective collective) const;
  const AlgorithmInfo* find(Collective collective, std::string_view name) const;
  // The algorithms whose preconditions `shape` meets.
  std::vector<const AlgorithmInfo*> applicable(const CallShape& shape) const;

  // "direct, ring, ..., auto": the names a call of `collective` may choose.
  std::string valid_names(Collective collective) const;

  // For the runtime and the built-ins.
  RegistryTables& tables() { return *tables_; }
  const RegistryTables& tables() const { return *tables_; }
  // Set by the owning runtime: changes then run only while it has no launch.
  void set_owner(RuntimeImpl* runtime) { owner_ = runtime; }
  // A built-in: like add(), but direct's entries carry no run function.
  void add_builtin(Algorithm<AllReduceArgs> algorithm);
  void add_builtin(Algorithm<AllGatherArgs> algorithm);
  void add_builtin(Algorithm<ReduceScatterArgs> algorithm);
  void add_builtin(Algorithm<AllToAllArgs> algorithm);
  void add_builtin(Algorithm<RaggedAllToAllArgs> algorithm);
  void add_builtin(Algorithm<BroadcastArgs> algorithm);
  void add_builtin(Algorithm<BarrierArgs> algorithm);

 private:
  template <class Args>
  void add_entry(Collective collective, Algorithm<Args> algorithm, bool builtin);
  // Runs `change` while the owner has no launch (RuntimeUsageError otherwise).
  void mutate(const char* what, const std::function<void()>& change);
  // Runs `read` with no change running at the same time (another host thread
  // may be changing the registry).
  void read(const std::function<void()>& read) const;
  RuntimeImpl* owner_ = nullptr;
  std::unique_ptr<RegistryTables> tables_;
};

// The registry `runtime` owns, created on first use.
AlgorithmRegistry& algorithm_registry(Runtime& runtime);

}  // namespace meshsim
