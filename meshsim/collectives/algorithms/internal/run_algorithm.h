#pragma once
// How a front-end runs a chosen point-to-point algorithm (anything but
// direct, which front-ends run natively): publish the call — with the
// algorithm's name, so members that chose differently fail with
// CollectiveMismatchError — and the Args peers may read, meet, run the
// algorithm on a Communicator, and wait until every send was read, so no
// buffer is released while a peer may still read it.

#include "meshsim/collectives/algorithms/internal/selection.h"
#include "meshsim/collectives/internal/meeting.h"

namespace meshsim {

// `call.algorithm` must be the choice's name (front-ends set it on both paths);
// `args` must be of the chosen collective's Args type.
void run_algorithm_erased(Meeting& meeting, const AlgorithmChoice& choice, Collective collective,
                          const CollectiveCall& call, const void* args);

template <class Args>
void run_algorithm(Meeting& meeting, const AlgorithmChoice& choice, Collective collective,
                   const CollectiveCall& call, const Args& args) {
  run_algorithm_erased(meeting, choice, collective, call, &args);
}

// The CallShape of a call over `meeting`'s group.
CallShape call_shape(const Meeting& meeting, Collective collective, size_t bytes, int64_t count,
                     ReduceOp op = ReduceOp::kSum);

}  // namespace meshsim
