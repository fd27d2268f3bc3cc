#include "tools/trace_command.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <utility>
#include <vector>

#include "meshsim/collectives/all_gather.h"
#include "meshsim/collectives/async.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/collectives/psum_scatter.h"
#include "meshsim/collectives/reductions.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/trace/chrome_trace.h"
#include "tools/bench_options.h"
#include "tools/cli_parse.h"

namespace meshsim::cli {
namespace {

// The step's devices: an accelerator of 100 TFLOP/s and 1 TB/s of memory.
constexpr DeviceSpec kDevice{.peak_flops = 100e12, .memory_bandwidth = 1e12};
// The activations each layer multiplies by its gathered weights.
constexpr double kBatch = 64;

void expect(bool ok, int device, const std::string& what) {
  if (!ok) throw InvalidArgumentError("device " + std::to_string(device) + ": wrong result of " + what);
}

// The training step of trace_command.h on one device.
void step(DeviceContext& ctx, const TraceOptions& o, const std::vector<std::string>& axes) {
  const int n = ctx.mesh().size();
  const int me = ctx.position();
  const int64_t s = o.shard_elements;
  std::vector<std::pair<int, int>> shift;
  for (int i = 0; i < n; ++i) shift.emplace_back(i, (i + 1) % n);
  for (int layer = 0; layer < o.layers; ++layer) {
    const float value = static_cast<float>(layer + 1);
    const Array weights = all_gather(ctx, Array::full({s}, DType::kFloat32, value), axes,
                                     {.tiled = true, .algorithm = "ring"});
    expect(weights.size() == n * s && weights.at<float>({n * s - 1}) == value, ctx.device_id(),
           "all_gather of layer " + std::to_string(layer));
    Pending next = ppermute_start(ctx, Array::full({s}, DType::kFloat32, static_cast<float>(me)),
                                  axes, shift);
    const double elements = static_cast<double>(n * s);
    ctx.compute(2 * kBatch * elements, 4 * elements);
    const Array activations = next.done();
    expect(activations.at<float>({0}) == static_cast<float>((me + n - 1) % n), ctx.device_id(),
           "ppermute of layer " + std::to_string(layer));
    const Array grads = psum_scatter(ctx, Array::full({n * s}, DType::kFloat32, 1), axes,
                                     {.tiled = true, .algorithm = "ring"});
    expect(grads.size() == s && grads.at<float>({0}) == static_cast<float>(n), ctx.device_id(),
           "psum_scatter of layer " + std::to_string(layer));
  }
  const Array loss = psum(ctx, Array::full({1}, DType::kFloat32, static_cast<float>(me)), axes);
  expect(loss.at<float>({0}) == static_cast<float>(n * (n - 1) / 2), ctx.device_id(), "psum");
}

}  // namespace

TraceCommand::TraceCommand(CLI::App& trace) {
  trace.add_option("--out", out_, "The trace file to write (Chrome trace JSON)")->required();
  trace.add_option("--mesh", mesh_, "Devices: a count (one axis x) or NAME=SIZE,... e.g. x=4,y=2")
      ->capture_default_str();
  trace.add_option("--topology", topology_,
                   "The network: a JSON file or a spec such as ring:bw=50GB/s,lat=500ns "
                   "(see meshsim bench --help)")
      ->capture_default_str();
  add_network_option(trace, network_);
  trace.add_option("--layers", layers_, "Layers of the step")->capture_default_str();
  trace.add_option("--shard-bytes", shard_bytes_,
                   "Bytes of each device's weight shard (suffixes K, M, G)")
      ->capture_default_str();
}

TraceOptions TraceCommand::options() const {
  TraceOptions o;
  o.mesh = parse_mesh(mesh_);
  auto time = std::make_shared<VirtualTime>(*parse_topology_option(topology_, o.mesh, network_));
  time->device = kDevice;
  o.time = std::move(time);
  o.topology_text = topology_ + " (" + network_ + ")";  // for the summary
  if (layers_ < 1 || layers_ > 1000) {
    throw bad_value("--layers", std::to_string(layers_), "must be in [1, 1000]");
  }
  o.layers = layers_;
  const size_t bytes = parse_bytes(shard_bytes_, "--shard-bytes");
  if (bytes < 4 || bytes % 4 != 0) {
    throw bad_value("--shard-bytes", shard_bytes_, "must be a multiple of 4 (float32), at least 4");
  }
  // Each device holds about 3 n shards (gathered weights, gradients), so the
  // mesh holds 3 n^2.
  const auto n = static_cast<size_t>(o.mesh.size());
  if (n > 4096) {
    throw bad_value("--mesh", mesh_, "this command traces at most 4096 devices");
  }
  if (bytes > (size_t{4} << 30) / (3 * n * n)) {
    throw bad_value("--shard-bytes", shard_bytes_,
                    "needs 3 x devices^2 x shard bytes of memory, over the 4 GiB this command "
                    "allows for " + std::to_string(n) + " devices");
  }
  o.shard_elements = static_cast<int64_t>(bytes / 4);
  // The trace holds ~2 n events per device and layer, and writing it takes
  // ~10 KB of memory per event (the JSON document, then its text: 9.4 KB
  // measured at 250k and 400k events), so the 4 GiB bound allows ~430k.
  constexpr double kMaxEvents = double{size_t{4} << 30} / 10'000;
  if (static_cast<double>(n) * n * 2 * o.layers > kMaxEvents) {
    throw bad_value("--layers", std::to_string(layers_),
                    "with " + std::to_string(n) + " devices the trace would have " +
                        std::to_string(2 * n * n * static_cast<size_t>(o.layers)) +
                        " events, ~10 KB of memory each to write: over the 4 GiB this command "
                        "allows (at most " + std::to_string(static_cast<int64_t>(kMaxEvents)) +
                        " events)");
  }
  check_output_path("--out", out_);
  o.out = out_;
  return o;
}

void run_trace(const TraceOptions& o, std::ostream& out) {
  const std::vector<std::string> axes = o.mesh.abstract_mesh().axis_names();
  Runtime runtime(o.mesh.size());
  LaunchRecord record;
  const auto start = std::chrono::steady_clock::now();
  // Room for every event: per layer, a ring all_gather and psum_scatter of
  // n - 1 steps each, the ppermute, its done and the compute.
  const size_t events = static_cast<size_t>(o.layers) * (2 * o.mesh.size() + 8) + 8;
  runtime.launch(o.mesh, [&](DeviceContext& ctx) { step(ctx, o, axes); },
                 {.time = o.time, .record = &record, .trace = true, .trace_capacity = events});
  const double wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  write_chrome_trace(record, o.out);

  std::map<std::string, int> per_op;
  for (const TraceEvent& e : record.events) ++per_op[std::string(trace_kind_name(e.kind)) + " " + e.op];
  out << fmt::format("meshsim trace: {} devices ({}), {} layers, {} B weight shards, on {}\n",
                     o.mesh.size(), o.mesh.to_string(), o.layers, 4 * o.shard_elements,
                     o.topology_text)
      << fmt::format("modeled step: {:.3f} us (latest device), wall: {:.3f} ms\n",
                     record.makespan() * 1e6, wall_ms)
      << fmt::format("{} events{}:\n", record.events.size(),
                     record.events_dropped > 0
                         ? fmt::format(" ({} dropped)", record.events_dropped)
                         : std::string());
  for (const auto& [op, count] : per_op) out << fmt::format("  {:>6}  {}\n", count, op);
  out << "wrote " << o.out
      << ": open it at https://ui.perfetto.dev (or chrome://tracing); the process "
         "'virtual time' shows the modeled step, 'wall time' the host's run\n";
}

}  // namespace meshsim::cli
