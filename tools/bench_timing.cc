#include "tools/bench_timing.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "meshsim/collectives/internal/reduction.h"
#include "meshsim/collectives/reductions.h"
#include "meshsim/mesh/axis_groups.h"
#include "tools/bench_reference.h"

namespace meshsim::cli {

std::vector<size_t> sweep_sizes(size_t min_bytes, size_t max_bytes, int step_factor) {
  std::vector<size_t> sizes;
  for (size_t size = min_bytes; size <= max_bytes; size *= step_factor) {
    sizes.push_back(size);
    if (size > max_bytes / step_factor) break;  // the next step would pass max (or overflow)
  }
  return sizes;
}

std::optional<Workload> prepare_size(const BenchOptions& options, size_t bytes) {
  const DeviceGroups groups = device_groups(options.mesh.abstract_mesh(), options.axes);
  Workload work = options.collective->prepare(options.params, groups, bytes, options.check);
  if (work.args.empty()) return std::nullopt;
  return work;
}

std::optional<Row> run_size(Runtime& runtime, const BenchOptions& options, size_t bytes) {
  return run_size(runtime, options, bytes, options.algo);
}

std::optional<Row> run_size(Runtime& runtime, const BenchOptions& options, size_t bytes,
                            std::string_view algorithm) {
  const std::optional<Workload> work = prepare_size(options, bytes);
  if (!work) return std::nullopt;
  return time_workload(runtime, options, *work, algorithm);
}

Row time_workload(Runtime& runtime, const BenchOptions& options, const Workload& work,
                  std::string_view algorithm) {
  using Clock = std::chrono::steady_clock;
  const Collective& collective = *options.collective;
  const DeviceGroups groups = device_groups(options.mesh.abstract_mesh(), options.axes);

  const int devices = options.mesh.size();
  const int iters = options.iters;
  std::vector<double> seconds(devices);
  std::vector<int64_t> wrong(devices);
  // With --check: when each timed call began and ended, at slot(position, call).
  std::vector<Clock::time_point> begins, ends;
  const auto slot = [iters](int position, int call) {
    return static_cast<size_t>(position) * iters + call;
  };
  if (options.check) {
    begins.resize(slot(devices, 0));
    ends.resize(slot(devices, 0));
  }
  const Array token = Array::from_values<int32_t>({1}, {1});
  // Viewed from options.axes once, not converted on every call.
  const AxisNames axes(options.axes);
  std::string ran, chosen_by;
  // Position 0's first call is the collective's (the --check barriers come
  // after it), so its first record says what ran.
  const auto read_record = [&](DeviceContext& ctx) {
    const std::span<const CollectiveRecord> records = ctx.collective_records();
    if (ctx.position() != 0 || records.empty()) return;
    ran = records.front().algorithm;
    chosen_by = records.front().chosen_by;
  };
  runtime.launch(options.mesh, [&](DeviceContext& ctx) {
    const int p = ctx.position();
    if (!options.check) {
      for (int call = 0; call < options.warmup; ++call) {
        collective.run(ctx, work, p, axes, algorithm);
      }
      const Clock::time_point start = Clock::now();
      for (int call = 0; call < iters; ++call) {
        collective.run(ctx, work, p, axes, algorithm);
      }
      seconds[p] = std::chrono::duration<double>(Clock::now() - start).count() / iters;
      read_record(ctx);
      return;
    }
    for (int call = 0; call < options.warmup + iters; ++call) {
      const Clock::time_point begin = Clock::now();
      const Array result = collective.run(ctx, work, p, axes, algorithm);
      const Clock::time_point end = Clock::now();
      if (call >= options.warmup) {
        begins[slot(p, call - options.warmup)] = begin;
        ends[slot(p, call - options.warmup)] = end;
      }
      // With more devices than cores, a device that checked at once would
      // hold a core that a peer still needs to return from the call.
      psum(ctx, token, axes);
      wrong[p] += count_wrong(result, work.expected[p]);
    }
    read_record(ctx);
  });
  if (options.check) {
    // A device that is still checking the previous result enters a call late,
    // and its peers wait for it. So a checked call counts from the moment the
    // last member of the group entered it (steady_clock is one clock for all
    // device threads) to the device's return.
    for (const std::vector<int>& members : groups.members) {
      for (int i = 0; i < iters; ++i) {
        Clock::time_point all_in = begins[slot(members[0], i)];
        for (int q : members) all_in = std::max(all_in, begins[slot(q, i)]);
        for (int q : members) {
          seconds[q] += std::chrono::duration<double>(ends[slot(q, i)] - all_in).count();
        }
      }
    }
    for (double& s : seconds) s /= iters;
  }

  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  const double median = sorted.size() % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  Row row;
  row.size = work.size();
  row.count = work.count;
  row.type = work.type;
  row.redop = collective.reduces == Reduces::kNo ? "none" : reduce_op_name(work.op);
  row.root = collective.rooted ? work.root : -1;
  row.time_us = sorted.back() * 1e6;
  row.median_us = median * 1e6;
  row.bandwidth = bandwidth(collective, row.size, sorted.back(), options.group_size());
  if (options.check) row.wrong = std::accumulate(wrong.begin(), wrong.end(), int64_t{0});
  row.algorithm = std::move(ran);
  row.chosen_by = std::move(chosen_by);
  return row;
}

void model_workload(Runtime& runtime, const BenchOptions& options, const Workload& work,
                    std::string_view algorithm, Row& row, LaunchRecord* trace) {
  if (options.time == nullptr && trace == nullptr) return;
  LaunchRecord own;
  LaunchRecord& record = trace != nullptr ? *trace : own;
  const AxisNames axes(options.axes);
  runtime.launch(
      options.mesh,
      [&](DeviceContext& ctx) {
        options.collective->run(ctx, work, ctx.position(), axes, algorithm);
      },
      {.time = options.time, .record = &record, .trace = trace != nullptr});
  if (options.time == nullptr) return;
  const double seconds = record.makespan();
  row.modeled_us = seconds * 1e6;
  row.modeled_busbw =
      seconds > 0 ? bandwidth(*options.collective, row.size, seconds, options.group_size()).busbw
                  : 0;
}

}  // namespace meshsim::cli
