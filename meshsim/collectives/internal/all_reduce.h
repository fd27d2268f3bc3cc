#pragma once
// The direct (shared-memory, zero-copy) all-reduce behind psum / pmax / pmin.
//
// Words: n = group size, S = bytes per member, rank = position in the group.
// Small group (Exchange::kMaxMembers at most): every member reduces all n
//   inputs itself, from shared copies when S <= Exchange::kMaxShared (1
//   meeting), else in place when n·S <= Meeting::kLeaderBytes (then departs:
//   2 meetings); larger inputs take the sliced path below.
// Larger group, small (n·S <= Meeting::kLeaderBytes): one meeting. The last
//   member to arrive (the leader) reduces all inputs in place, in rank order,
//   and writes the result into every member's output before it releases
//   them. Cost: 1 barrier; the leader reads n·S and writes n·S bytes.
// Large: every member reduces its own 1/n slice of the elements over all
//   inputs (read in place), chunk by chunk, and writes each chunk into every
//   member's output, the peers' too; then it meets again before leaving
//   (departure), so its output is complete and no peer still reads its input.
//   Cost: 2 barriers; each member reads S and writes S bytes (a chunk copied
//   to the peers is read from this member's cache).
// Both paths give the same bits: every element is reduced once, in rank order.

#include <string_view>

#include "meshsim/collectives/internal/reduction.h"
#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim::detail {

// `call_dtype` is the dtype published for the mismatch check: the caller's,
// which differs from x's when x is a converted copy (pmean reduces float16 and
// bfloat16 in float32, yet a float32 caller must not match a bfloat16 one).
// `algorithm` is the call's own choice ("" for the runtime's): any other
// algorithm than direct runs on the fabric (algorithms/registry.h).
Array all_reduce(DeviceContext& ctx, const char* op_name, ReduceOp op, const Array& x,
                 const AxisNames& axes, const AxisIndexGroups& index_groups, DType call_dtype,
                 std::string_view algorithm);

}  // namespace meshsim::detail
