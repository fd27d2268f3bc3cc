#pragma once
// `meshsim trace`: runs a small sharded training step on a simulated mesh in
// virtual time and writes its trace for Perfetto (ui.perfetto.dev) or
// chrome://tracing:
//   meshsim trace --out step.json --mesh 8 --topology 'ring:bw=50GB/s,lat=500ns'
//
// The step, on every device, per layer: gather the layer's weight shards
// (all_gather, ring), start sending activations to the next device
// (ppermute_start), compute the layer on a roofline (the transfer overlaps
// it), take the activations (done), reduce-scatter the gradients
// (psum_scatter, ring); then a psum of the loss (direct). Every result is
// checked against its closed form.

#include <CLI/CLI.hpp>

#include <memory>
#include <ostream>
#include <string>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/time/virtual_time.h"

namespace meshsim::cli {

struct TraceOptions {
  Mesh mesh = Mesh::make({{"x", 8}});
  std::shared_ptr<const VirtualTime> time;  // with the device spec of the step's compute
  std::string topology_text;
  std::string out;
  int layers = 3;
  int64_t shard_elements = 1 << 16;  // float32 elements of each weight shard
};

// Registers the options on the `trace` subcommand; options() validates what
// CLI11 read (InvalidArgumentError naming the option). Must outlive the parse.
class TraceCommand {
 public:
  explicit TraceCommand(CLI::App& trace);
  TraceCommand(const TraceCommand&) = delete;
  TraceCommand& operator=(const TraceCommand&) = delete;

  TraceOptions options() const;

 private:
  std::string mesh_ = "8";
  std::string topology_ = "ring:bw=50GB/s,lat=500ns";
  std::string network_ = "congestion-unaware";
  std::string out_;
  int layers_ = 3;
  std::string shard_bytes_ = "256K";
};

// Runs the step, writes the trace to options.out and a summary to `out`
// (events per op, the modeled makespan, the wall time, how to open the file).
// Throws meshsim::Error if the launch fails or a result is wrong.
void run_trace(const TraceOptions& options, std::ostream& out);

}  // namespace meshsim::cli
