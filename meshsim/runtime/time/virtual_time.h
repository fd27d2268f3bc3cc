#pragma once
// VirtualTime: what a launch needs to keep simulated time next to wall time.
//
// With virtual time on, every device of the launch has a clock (seconds,
// starting at 0) that only the program moves, never the host's scheduler:
// - a transfer departs at its sender's clock and is priced by the network
//   model; its receiver's clock becomes max(its clock, the arrival). That
//   holds for algorithms' point-to-point transfers (priced once per
//   transfer, with its total bytes, whatever the segmenting) and for
//   psend / precv;
// - a direct collective is priced as the transfers it stands for, each
//   member sending straight to each member that needs its data: psum and
//   all_gather send the whole input (or shard) to every peer, psum_scatter
//   and all_to_all one block to each peer, ppermute one buffer along each
//   pair, pbroadcast the source's buffer to every peer, a barrier zero bytes
//   to every peer; argmax / argmin as psum, ragged_all_to_all the rows each
//   sender sends. A member waits only for the data it receives (a device
//   that ppermute sends nothing to keeps its clock);
// - an algorithm that reads its peers' arguments in place
//   (AlgorithmInfo::reads_peer_args) moves data the model does not see: only
//   its point-to-point transfers and Communicator barriers are priced;
// - device code advances its own clock for compute (DeviceContext::advance,
//   DeviceContext::compute on a roofline);
// - a *_start prices its transfers but leaves the clock where it is; its
//   done() moves the clock to the arrival if that is later, so compute
//   between them overlaps the communication.
// - a kernel's DMA (kernel/run_kernel.h) departs when it starts and arrives
//   at the wait that takes its receive semaphore; a semaphore signal to
//   another device is a 0-byte transfer. (The one exception to the rule
//   below: signals from several devices racing for one semaphore of which a
//   wait takes only some.)
// The clocks are a function of the program: the same program gives bitwise
// identical times on every run, whatever the thread count or execution mode.
//
// Meetings that only serve the host (an algorithm's opening meeting, the
// departure after in-place reads) cost nothing.
//
// Pricing after the launch. A network with congestion (CongestionAwareModel,
// any model whose needs_canonical_order() is true) or an external simulator
// (ExternalClock) must see transfers in the order of virtual time, which
// devices running at once cannot give it. Such a launch records how each
// clock moves (32 bytes per receive, advance and async join, ~100 more while
// the replay runs; at most replay_steps of them, a ResourceError beyond)
// and, once the devices finished and were let go, the launching thread
// replays the clocks as a discrete-event simulation that prices every
// transfer in that order (one replay at a time in the process: launches may
// share a model). The times are the same functions of the program. But a
// device cannot read its clock while it runs (DeviceContext::now() is a
// RuntimeUsageError): read LaunchRecord::end_times and the trace. Every
// such launch that succeeded is replayed, with or without a
// LaunchOptions::record (the replay is what drives an external simulator);
// a failed one is not. The replay's errors (a model's, a simulator's, a
// clock that is not finite) are the launch's.

#include <cstdint>
#include <memory>
#include <vector>

#include "meshsim/mesh/abstract_mesh.h"
#include "meshsim/mesh/topology/topology_mapping.h"
#include "meshsim/runtime/time/external_clock.h"
#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

// A device's roofline for DeviceContext::compute: a kernel of F flops that
// moves B bytes of memory takes max(F / peak_flops, B / memory_bandwidth).
struct DeviceSpec {
  double peak_flops = 0;        // FLOP/s
  double memory_bandwidth = 0;  // bytes/s
};

struct VirtualTime {
  // Prices every transfer; exactly one of `network` and `external` is set.
  // A model that does not need canonical order is called from the launch's
  // devices at once, in no particular order: it must be a function of the
  // transfer alone and safe to call from several threads
  // (CongestionUnawareModel is; a CallbackModel is if its function is). One
  // that needs it (CongestionAwareModel) prices after the launch (above).
  std::shared_ptr<NetworkModel> network;
  // The topology node of each mesh position (row-major over the launch
  // mesh's axes). Empty: position p is node p.
  std::vector<int> nodes;
  // For DeviceContext::compute; unset (zero) fields make compute() an error.
  DeviceSpec device;
  // A simulator that owns time and carries the transfers (external_clock.h);
  // prices after the launch.
  std::shared_ptr<ExternalClock> external;
  // Pricing after the launch: how many clock steps the launch may keep over
  // all its devices, each device an equal share (>= 2: its start and a move); 32 bytes each.
  int64_t replay_steps = int64_t{1} << 26;
};

// Virtual time on `network`, the mesh's positions placed on `topology` by
// `mapping` (built for a mesh of the launch mesh's shape).
VirtualTime virtual_time_on(std::shared_ptr<NetworkModel> network, const AbstractMesh& mesh,
                            const TopologyMapping& mapping, DeviceSpec device = {});

}  // namespace meshsim
