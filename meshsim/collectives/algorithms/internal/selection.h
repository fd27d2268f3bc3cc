#pragma once
// Choosing the algorithm of one collective call (the order is registry.h's)
// and recording the choice in the device's collective records.

#include <string_view>

#include "meshsim/collectives/algorithms/algorithm.h"
#include "meshsim/collectives/algorithms/internal/registry_tables.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

struct AlgorithmChoice {
  const RegistryEntry* entry = nullptr;  // entry->is_direct(): run natively
  const char* name = "direct";          // entry's name, stable for the runtime
  bool is_direct() const { return entry->is_direct(); }
};

// `front_end` names the call in messages and records ("psum"); `requested`
// is the call's own algorithm option ("" for none). UnknownAlgorithmError /
// AlgorithmPreconditionError as registry.h says.
AlgorithmChoice choose_algorithm(DeviceContext& ctx, const char* front_end, const AxisNames& axes,
                                 const CallShape& shape, std::string_view requested);

}  // namespace meshsim
