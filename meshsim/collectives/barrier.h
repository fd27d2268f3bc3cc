#pragma once
// barrier: no member of each group over `axes` (one axis or several,
// major-to-minor; optionally within axis_index_groups) returns before every
// member of its group has called it. Members must all call barrier, else
// CollectiveMismatchError (with another collective) or DeadlockError.
// `algorithm`: "" for the runtime's choice, "auto", or a name of
// algorithms/registry.h ("direct": one meeting of the group's rendezvous;
// "dissemination": ceil(log2 n) rounds of point-to-point signals).

#include <string_view>

#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

void barrier(DeviceContext& ctx, const AxisNames& axes,
             const AxisIndexGroups& axis_index_groups = {}, std::string_view algorithm = {});

}  // namespace meshsim
