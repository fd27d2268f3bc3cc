#pragma once
// How a front-end runs a chosen point-to-point algorithm (anything but
// direct, which front-ends run natively): publish the call — with the
// algorithm's name, so members that chose differently fail with
// CollectiveMismatchError — and the Args peers may read, meet, run the
// algorithm on a Communicator, and wait until every send was read, so no
// buffer is released while a peer may still read it.

#include <array>
#include <cstddef>

#include "meshsim/collectives/algorithms/internal/selection.h"
#include "meshsim/collectives/internal/meeting.h"

namespace meshsim {

// Bytes of an Args buffer, which peers may read in place (CallMemory).
struct ArgumentBuffer {
  const void* data = nullptr;
  size_t bytes = 0;
};
using ArgumentBuffers = std::array<ArgumentBuffer, 2>;

// Each Args type's buffers for a group of n: its input and its output. A
// ragged all-to-all's input is vouched as far as its slices reach, its
// output not at all (RaggedAllToAllArgs does not carry its rows).
ArgumentBuffers argument_buffers(const AllReduceArgs& args, int n);
ArgumentBuffers argument_buffers(const AllGatherArgs& args, int n);
ArgumentBuffers argument_buffers(const ReduceScatterArgs& args, int n);
ArgumentBuffers argument_buffers(const AllToAllArgs& args, int n);
ArgumentBuffers argument_buffers(const RaggedAllToAllArgs& args, int n);
ArgumentBuffers argument_buffers(const BroadcastArgs& args, int n);
ArgumentBuffers argument_buffers(const BarrierArgs& args, int n);

// `call.algorithm` must be the choice's name (front-ends set it on both paths);
// `args` must be of the chosen collective's Args type.
void run_algorithm_erased(Meeting& meeting, const AlgorithmChoice& choice, Collective collective,
                          const CollectiveCall& call, const void* args,
                          const ArgumentBuffers& buffers);

template <class Args>
void run_algorithm(Meeting& meeting, const AlgorithmChoice& choice, Collective collective,
                   const CollectiveCall& call, const Args& args) {
  run_algorithm_erased(meeting, choice, collective, call, &args,
                       argument_buffers(args, meeting.size()));
}

// The CallShape of a call over `meeting`'s group.
CallShape call_shape(const Meeting& meeting, Collective collective, size_t bytes, int64_t count,
                     ReduceOp op = ReduceOp::kSum);

}  // namespace meshsim
