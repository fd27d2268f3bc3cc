#include "meshsim/collectives/algorithms/internal/run_algorithm.h"

#include <algorithm>

#include "meshsim/collectives/algorithms/internal/communicator_state.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"

namespace meshsim {

namespace {

size_t element_bytes(int64_t count, DType dtype) {
  return static_cast<size_t>(count) * dtype_size(dtype);
}

}  // namespace

ArgumentBuffers argument_buffers(const AllReduceArgs& a, int) {
  const size_t bytes = element_bytes(a.count, a.dtype);
  return {{{a.in, bytes}, {a.out, bytes}}};
}
ArgumentBuffers argument_buffers(const AllGatherArgs& a, int n) {
  return {{{a.in, a.bytes}, {a.out, n * a.bytes}}};
}
ArgumentBuffers argument_buffers(const ReduceScatterArgs& a, int n) {
  const size_t block = element_bytes(a.count, a.dtype);
  return {{{a.in, n * block}, {a.out, block}}};
}
ArgumentBuffers argument_buffers(const AllToAllArgs& a, int n) {
  return {{{a.in, n * a.bytes}, {a.out, n * a.bytes}}};
}
ArgumentBuffers argument_buffers(const RaggedAllToAllArgs& a, int n) {
  int64_t rows = 0;
  for (int64_t e = 0; e < n * a.slices_per_peer; ++e) {
    rows = std::max(rows, a.input_offsets[e] + a.send_sizes[e]);
  }
  return {{{a.in, static_cast<size_t>(rows) * a.row_bytes}, {}}};
}
ArgumentBuffers argument_buffers(const BroadcastArgs& a, int) {
  return {{{a.in, a.bytes}, {a.out, a.bytes}}};
}
ArgumentBuffers argument_buffers(const BarrierArgs&, int) { return {}; }

void run_algorithm_erased(Meeting& meeting, const AlgorithmChoice& choice, Collective collective,
                          const CollectiveCall& call, const void* args,
                          const ArgumentBuffers& buffers) {
  meeting.publish(call, nullptr, nullptr, args);
  meeting.meet();
  auto state = std::make_unique<CommunicatorState>();
  state->ctx = &meeting.context();
  state->waiter = &DeviceHooks::waiter(meeting.context());
  state->op = call.op;
  state->group = meeting.group();
  state->collective = collective;
  state->entry = choice.entry;
  for (const ArgumentBuffer& b : buffers) state->memory->vouch(b.data, b.bytes);
  for (size_t i = 0; i < choice.entry->info->tunables.size(); ++i) {
    if (choice.entry->info->tunables[i].name == "segment_bytes") {
      // Whole cache lines, so no segment border splits an element of any
      // dtype (a reduction reads whole elements); 0 or less: one segment.
      const int64_t v = choice.entry->tunable_values[i];
      state->segment_bytes = v <= 0 ? 0 : std::max<size_t>(64, static_cast<size_t>(v) / 64 * 64);
    }
  }
  Communicator comm(std::move(state));
  try {
    choice.entry->run(comm, args);
    comm.wait_sends();
    // Departure: nobody frees what a peer may still read through peer_args.
    if (choice.entry->info->reads_peer_args) meeting.arrive();
  } catch (const CancelledError&) {
    if (DeviceHooks::waiter(meeting.context()).cancelled()) throw;  // settled already
    DeviceHooks::fail_and_settle(meeting.context(), std::current_exception());
    throw;
  } catch (...) {
    // Peers may be reading this member's posted buffers in place, or be
    // about to: nothing is freed until every device has stopped.
    DeviceHooks::fail_and_settle(meeting.context(), std::current_exception());
    throw;
  }
}

CallShape call_shape(const Meeting& meeting, Collective collective, size_t bytes, int64_t count,
                     ReduceOp op) {
  CallShape shape;
  shape.collective = collective;
  shape.group_size = meeting.size();
  shape.bytes = bytes;
  shape.count = count;
  shape.op = op;
  shape.num_axes = static_cast<int>(meeting.group_set().axes.size());
  shape.index_groups = !meeting.group_set().index_groups.empty();
  shape.equal_groups = meeting.group_set().equal_sizes;
  return shape;
}

}  // namespace meshsim
