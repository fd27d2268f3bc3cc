#pragma once
// ShardMapPlan: jax.jit(shard_map(body, mesh, in_specs, out_specs)) as an
// object. Built once, called many times on ShardedArrays; returns
// ShardedArrays (call gather() on one for a host Array).
//
//   ShardMapPlan step(rt, AbstractMesh({{"x", 2}}), body, {P{"x"}}, {P{"x"}});
//   ShardedArray y = step({device_put(x, NamedSharding(mesh1, P{"x"}))})[0];
//   ShardedArray z = step({device_put(x, NamedSharding(mesh2, P{"x"}))})[0];  // cache hit
//
// Mesh: a plan built for an AbstractMesh runs on whichever concrete Mesh of
// that shape its arguments live on — concrete devices come only from the
// arguments. A plan built for a concrete Mesh runs only there: arguments on
// another device set raise DeviceMismatchError naming both device sets (the
// AbstractMesh plan runs there). All arguments of one call must live on one
// device set (else DeviceMismatchError naming both).
//
// Cache: everything that depends only on the mesh shape and the specs —
// spec validation, shard shapes and divisibility, boxes, replica sources, the
// split / gather copy plans — is computed on the first call with a given
// signature and reused. The key is the plan's mesh shape and specs (fixed per
// plan) plus every input's global shape and dtype, so a different shape or
// dtype is a miss, never a wrong hit; running on another concrete mesh of the
// same shape is a hit. Output layouts are cached per signature by each
// output's per-device shape and dtype. stats() counts hits and misses. The
// cache grows by one entry per distinct signature and is never evicted: it
// lives as long as the plan.
//
// Arguments: an input whose sharding is the in_spec (same normalized spec)
// on the call's mesh is passed to the body as is — its shards, no copy. An
// input with another spec, or on another mesh over the same devices, is
// resharded as with_sharding_constraint would (gathered on the host, split by
// the in_spec; stats().reshards counts them). Outputs are ShardedArrays on the
// call's mesh with the out_specs; a replicated out_spec is checked bitwise as
// in shard_map (ReplicationError) unless check_replication is off.
//
// Memory and lifetime: a plan holds its body, its specs, its mesh (concrete
// plans) and the cache — layouts and copy plans, never array data — plus, per
// concrete mesh it has run on, the NamedShardings of its outputs. Arguments
// are held only for the call; outputs own their shards and a reference to
// the cached layout, so they outlive the plan. Copies of a plan share its
// cache (like copies of a jitted function).
//
// Thread safety: one plan may be called from several host threads at once.
// The cache is guarded (lookups share a reader lock; the launch holds no
// lock), so calls on disjoint meshes launch concurrently and calls on the
// same devices run one after the other (as Runtime::launch). The body is then
// called concurrently too, as in any launch. The Runtime must outlive the
// plan: a call after it was destroyed throws RuntimeUsageError.

#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/arg_span.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/runtime/drivers/shard_map.h"
#include "meshsim/runtime/drivers/sharded_array.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim {

struct PlanStats {
  int64_t hits = 0;      // calls whose signature was cached
  int64_t misses = 0;    // calls that computed (and cached) a signature's layouts
  int64_t reshards = 0;  // inputs resharded because their sharding differed
};

class ShardMapPlan {
 public:
  // `body(ctx, shards)` returns an Array or a std::vector<Array>; with one
  // input it may be `body(ctx, shard)`. SpecError / AxisError now for a spec
  // naming an axis the mesh lacks (ranks are checked on the first call).
  template <class F>
  ShardMapPlan(Runtime& runtime, const AbstractMesh& mesh, F&& body,
               ArgSpan<PartitionSpec> in_specs, ArgSpan<PartitionSpec> out_specs,
               ShardMapOptions options = {})
      : ShardMapPlan(runtime, mesh, std::nullopt, to_body(std::forward<F>(body)), in_specs,
                     out_specs, options) {}
  template <class F>
  ShardMapPlan(Runtime& runtime, const Mesh& mesh, F&& body, ArgSpan<PartitionSpec> in_specs,
               ArgSpan<PartitionSpec> out_specs, ShardMapOptions options = {})
      : ShardMapPlan(runtime, mesh.abstract_mesh(), mesh, to_body(std::forward<F>(body)),
                     in_specs, out_specs, options) {}

  // Runs the body on the arguments' mesh (see the class comment for errors).
  // InvalidArgumentError for a wrong number of arguments, or for no arguments
  // to an AbstractMesh plan (nothing says where to run); MeshError if no
  // argument lives on a mesh of the plan's shape.
  std::vector<ShardedArray> operator()(ArgSpan<ShardedArray> args) const;

  // A moved-from plan raises InvalidArgumentError from every member (copies
  // share the plan: a copy of it, too).
  PlanStats stats() const;
  const AbstractMesh& abstract_mesh() const;
  // The concrete mesh of a plan built for one; nullopt for an AbstractMesh plan.
  const std::optional<Mesh>& mesh() const;

 private:
  struct Impl;

  template <class F>
  static ShardBody to_body(F&& body) {
    if constexpr (std::invocable<F&, DeviceContext&, std::span<const Array>>) {
      return detail::to_shard_body(std::forward<F>(body));
    } else {
      static_assert(std::invocable<F&, DeviceContext&, const Array&>,
                    "a plan body takes (DeviceContext&, std::span<const Array>) or, with one "
                    "input, (DeviceContext&, const Array&)");
      return detail::to_shard_body(
          [f = std::forward<F>(body)](DeviceContext& ctx, std::span<const Array> shards) mutable {
            return f(ctx, shards[0]);
          });
    }
  }
  ShardMapPlan(Runtime& runtime, const AbstractMesh& shape, std::optional<Mesh> mesh,
               ShardBody body, std::span<const PartitionSpec> in_specs,
               std::span<const PartitionSpec> out_specs, ShardMapOptions options);

  // The plan's state; InvalidArgumentError for a moved-from plan.
  Impl& impl() const;
  std::shared_ptr<Impl> impl_;
};

}  // namespace meshsim
