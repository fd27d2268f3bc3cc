#include "meshsim/runtime/drivers/plan.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "meshsim/runtime/drivers/internal/shard_layout.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"

namespace meshsim {
namespace {

using detail::ShardLayout;
using LayoutPtr = std::shared_ptr<const ShardLayout>;

// P{"x"} and P{"x", nullptr} shard every array alike: compare the entries
// up to the last sharded one (normalized() without allocating).
bool same_spec(const PartitionSpec& a, const PartitionSpec& b) {
  const auto& x = a.entries();
  const auto& y = b.entries();
  const size_t n = std::max(x.size(), y.size());
  for (size_t d = 0; d < n; ++d) {
    const bool in_x = d < x.size(), in_y = d < y.size();
    if (in_x && in_y) {
      if (x[d] != y[d]) return false;
    } else if (!(in_x ? x[d] : y[d]).empty()) {
      return false;
    }
  }
  return true;
}

std::string devices_to_string(const std::vector<int>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

bool same_device_set(const Mesh& a, const Mesh& b) {
  std::vector<int> x = a.device_ids(), y = b.device_ids();
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

void hash_combine(size_t& seed, size_t value) {
  seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}

template <class Shapes>
size_t signature_hash(const Shapes& shapes_and_dtypes) {
  size_t h = shapes_and_dtypes.size();
  for (const auto& [shape, dtype] : shapes_and_dtypes) {
    hash_combine(h, static_cast<size_t>(dtype));
    hash_combine(h, shape.size());
    for (int64_t d : shape) hash_combine(h, std::hash<int64_t>{}(d));
  }
  return h;
}

using Signature = std::vector<std::pair<Shape, DType>>;

}  // namespace

struct ShardMapPlan::Impl {
  // The cached part of one input signature. Not in the anonymous namespace:
  // Impl has external linkage, and a unity build compiles this file as a
  // header, where GCC warns about a member whose type has internal linkage.
  struct Entry {
    Signature inputs;
    std::vector<LayoutPtr> in_layouts;
    // Output layouts by the outputs' per-device shapes and dtypes.
    std::mutex outs_mu;
    std::vector<std::pair<Signature, std::vector<LayoutPtr>>> outs;
  };

  // A constructor, not aggregate initialization: make_shared's parentheses
  // need one in clang 14, which has no parenthesized aggregate init.
  Impl(Runtime& runtime, AbstractMesh shape, std::optional<Mesh> mesh, ShardBody body,
       std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs,
       ShardMapOptions options)
      : runtime(runtime),
        shape(std::move(shape)),
        mesh(std::move(mesh)),
        body(std::move(body)),
        in_specs(std::move(in_specs)),
        out_specs(std::move(out_specs)),
        options(std::move(options)) {}

  Runtime& runtime;
  AbstractMesh shape;
  std::optional<Mesh> mesh;
  ShardBody body;
  std::vector<PartitionSpec> in_specs, out_specs;
  ShardMapOptions options;

  mutable std::shared_mutex mu;
  // By signature_hash of the inputs; Entry::inputs tells collisions apart.
  std::unordered_multimap<size_t, std::shared_ptr<Entry>> cache;
  // Per concrete mesh run on: the NamedSharding of every output.
  std::vector<std::pair<Mesh, std::vector<std::shared_ptr<const NamedSharding>>>> out_shardings;

  mutable std::atomic<int64_t> hits{0}, misses{0}, reshards{0};
  // Expired once `runtime` is destroyed (it must outlive the plan).
  std::weak_ptr<const void> runtime_alive;

  const Mesh& mesh_of(std::span<const ShardedArray> args) const;
  std::shared_ptr<Entry> entry_for(std::span<const ShardedArray> args);
  std::vector<LayoutPtr> out_layouts(Entry& entry, const std::vector<std::vector<Array>>& outs);
  std::vector<std::shared_ptr<const NamedSharding>> shardings_for(const Mesh& target);
  std::string plan_name() const {
    return "shard_map plan on " + (mesh ? mesh->to_string() : shape.to_string());
  }
};

// Where the call runs: the plan's mesh, or the first argument's for an
// AbstractMesh plan; every argument must live on the same device set.
const Mesh& ShardMapPlan::Impl::mesh_of(std::span<const ShardedArray> args) const {
  const Mesh* target = mesh ? &*mesh : nullptr;
  if (!target) {
    if (args.empty()) {
      throw InvalidArgumentError(plan_name() +
                                 ": an AbstractMesh plan takes its devices from its arguments, "
                                 "and it has none");
    }
    for (const ShardedArray& a : args) {
      if (a.mesh().abstract_mesh() == shape) {
        target = &a.mesh();
        break;
      }
    }
    if (!target) {
      throw MeshError(plan_name() + ": no argument lives on a mesh of that shape (input 0 is on " +
                      args[0].mesh().to_string() + ")");
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Mesh& m = args[i].mesh();
    if (&m != target && m != *target && !same_device_set(m, *target)) {
      throw DeviceMismatchError(
          plan_name() + ": input " + std::to_string(i) + " lives on devices " +
          devices_to_string(m.device_ids()) + " (" + m.to_string() + ") but the call runs on devices " +
          devices_to_string(target->device_ids()) + " (" + target->to_string() + ")");
    }
  }
  return *target;
}

std::shared_ptr<ShardMapPlan::Impl::Entry> ShardMapPlan::Impl::entry_for(std::span<const ShardedArray> args) {
  std::vector<std::pair<const Shape&, DType>> sig;
  sig.reserve(args.size());
  for (const ShardedArray& a : args) sig.emplace_back(a.shape(), a.dtype());
  const size_t h = signature_hash(sig);
  const auto matches = [&](const Entry& e) {
    for (size_t i = 0; i < sig.size(); ++i) {
      if (e.inputs[i].first != sig[i].first || e.inputs[i].second != sig[i].second) return false;
    }
    return true;
  };
  {
    std::shared_lock lock(mu);
    auto [begin, end] = cache.equal_range(h);
    for (auto it = begin; it != end; ++it) {
      if (matches(*it->second)) {
        hits.fetch_add(1, std::memory_order_relaxed);
        return it->second;
      }
    }
  }
  // A miss: validate and lay out every input (throws before caching).
  auto entry = std::make_shared<Entry>();
  for (size_t i = 0; i < args.size(); ++i) {
    entry->inputs.emplace_back(args[i].shape(), args[i].dtype());
    entry->in_layouts.push_back(std::make_shared<const ShardLayout>(
        detail::make_layout(shape, in_specs[i], args[i].shape(), args[i].dtype(),
                            detail::argument_name("input", i, in_specs[i]))));
  }
  std::unique_lock lock(mu);
  auto [begin, end] = cache.equal_range(h);
  for (auto it = begin; it != end; ++it) {
    if (matches(*it->second)) {  // another thread got there first
      hits.fetch_add(1, std::memory_order_relaxed);
      return it->second;
    }
  }
  misses.fetch_add(1, std::memory_order_relaxed);
  cache.emplace(h, entry);
  return entry;
}

std::vector<LayoutPtr> ShardMapPlan::Impl::out_layouts(
    Entry& entry, const std::vector<std::vector<Array>>& outs) {
  const std::vector<Array>& first = outs[0];
  std::lock_guard lock(entry.outs_mu);
  for (const auto& [sig, layouts] : entry.outs) {
    bool same = true;
    for (size_t i = 0; i < first.size() && same; ++i) {
      same = sig[i].first == first[i].shape() && sig[i].second == first[i].dtype();
    }
    if (same) return layouts;
  }
  Signature sig;
  std::vector<LayoutPtr> layouts;
  for (size_t i = 0; i < first.size(); ++i) {
    const std::string what = detail::argument_name("output", i, out_specs[i]);
    sig.emplace_back(first[i].shape(), first[i].dtype());
    layouts.push_back(std::make_shared<const ShardLayout>(detail::make_layout(
        shape, out_specs[i], detail::global_shape_of(shape, out_specs[i], first[i].shape(), what),
        first[i].dtype(), what)));
  }
  entry.outs.emplace_back(std::move(sig), layouts);
  return layouts;
}

std::vector<std::shared_ptr<const NamedSharding>> ShardMapPlan::Impl::shardings_for(
    const Mesh& target) {
  {
    std::shared_lock lock(mu);
    for (const auto& [m, shardings] : out_shardings) {
      if (m == target) return shardings;
    }
  }
  std::vector<std::shared_ptr<const NamedSharding>> shardings;
  for (const PartitionSpec& spec : out_specs) {
    shardings.push_back(std::make_shared<const NamedSharding>(target, spec));
  }
  std::unique_lock lock(mu);
  for (const auto& [m, existing] : out_shardings) {
    if (m == target) return existing;
  }
  out_shardings.emplace_back(target, shardings);
  return shardings;
}

ShardMapPlan::ShardMapPlan(Runtime& runtime, const AbstractMesh& shape, std::optional<Mesh> mesh,
                           ShardBody body, std::span<const PartitionSpec> in_specs,
                           std::span<const PartitionSpec> out_specs, ShardMapOptions options)
    : impl_(std::make_shared<Impl>(runtime, shape, std::move(mesh), std::move(body),
                                   std::vector<PartitionSpec>(in_specs.begin(), in_specs.end()),
                                   std::vector<PartitionSpec>(out_specs.begin(), out_specs.end()),
                                   options)) {
  impl_->runtime_alive = RuntimeHooks::impl(runtime).lifetime();
  for (size_t i = 0; i < in_specs.size(); ++i) {
    detail::validate_axes(shape, in_specs[i], detail::argument_name("input", i, in_specs[i]));
  }
  for (size_t i = 0; i < out_specs.size(); ++i) {
    detail::validate_axes(shape, out_specs[i], detail::argument_name("output", i, out_specs[i]));
  }
}

ShardMapPlan::Impl& ShardMapPlan::impl() const {
  if (!impl_) throw InvalidArgumentError("ShardMapPlan: used a moved-from plan");
  return *impl_;
}

std::vector<ShardedArray> ShardMapPlan::operator()(ArgSpan<ShardedArray> args_list) const {
  Impl& impl = this->impl();
  if (impl.runtime_alive.expired()) {
    throw RuntimeUsageError(impl.plan_name() +
                            " called after its Runtime was destroyed (the Runtime must outlive "
                            "the plan)");
  }
  const std::span<const ShardedArray> args = args_list;
  if (args.size() != impl.in_specs.size()) {
    throw InvalidArgumentError(impl.plan_name() + " got " + std::to_string(args.size()) +
                               " inputs but has " + std::to_string(impl.in_specs.size()) +
                               " in_specs");
  }
  const Mesh& target = impl.mesh_of(args);
  const std::shared_ptr<ShardMapPlan::Impl::Entry> entry = impl.entry_for(args);

  // Per input, its shards on `target` by position: the argument's own when
  // its sharding matches, else resharded ones kept alive here.
  const size_t num_in = args.size();
  std::vector<std::span<const Array>> in_shards(num_in);
  std::vector<std::vector<Array>> resharded;
  resharded.reserve(num_in);
  for (size_t i = 0; i < num_in; ++i) {
    const ShardedArray& a = args[i];
    if ((&a.mesh() == &target || a.mesh() == target) &&
        same_spec(a.sharding().spec(), impl.in_specs[i])) {
      in_shards[i] = a.shards();
    } else {
      impl.reshards.fetch_add(1, std::memory_order_relaxed);
      resharded.push_back(detail::split(*entry->in_layouts[i], a.gather()));
      in_shards[i] = resharded.back();
    }
  }

  const int n = target.size();
  std::vector<std::vector<Array>> outputs(n);
  impl.runtime.launch(target, [&](DeviceContext& ctx) {
    const int p = ctx.position();
    if (num_in == 1) {  // the argument's own shard, not even a handle copy
      outputs[p] = impl.body(ctx, std::span<const Array>(&in_shards[0][p], 1));
      return;
    }
    std::vector<Array> local;
    local.reserve(num_in);
    for (const auto& shards : in_shards) local.push_back(shards[p]);
    outputs[p] = impl.body(ctx, local);
  });

  const size_t num_out = impl.out_specs.size();
  detail::check_outputs(target, num_out, outputs);
  const std::vector<LayoutPtr> layouts = impl.out_layouts(*entry, outputs);
  const auto shardings = impl.shardings_for(target);
  std::vector<ShardedArray> results;
  results.reserve(num_out);
  for (size_t i = 0; i < num_out; ++i) {
    std::vector<Array> per_device(n);
    for (int p = 0; p < n; ++p) per_device[p] = std::move(outputs[p][i]);
    if (impl.options.check_replication) {
      detail::check_replicas(*layouts[i], target, per_device, i);
    }
    results.emplace_back(shardings[i], layouts[i], std::move(per_device));
  }
  return results;
}

PlanStats ShardMapPlan::stats() const {
  return {impl().hits.load(), impl().misses.load(), impl().reshards.load()};
}
const AbstractMesh& ShardMapPlan::abstract_mesh() const { return impl().shape; }
const std::optional<Mesh>& ShardMapPlan::mesh() const { return impl().mesh; }

}  // namespace meshsim
