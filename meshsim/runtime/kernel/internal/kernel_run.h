#pragma once
// The kernel launch every device of a launch runs: run_kernel (one program)
// and mpmd_map (several) both end here. Internal to runtime/.

#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/kernel/internal/kernel_programs.h"
#include "meshsim/runtime/kernel/kernel_context.h"
#include "meshsim/runtime/kernel/kernel_spec.h"

namespace meshsim {

// Runs `body` as program `program` of `programs` on the calling device, with
// the contract of run_kernel (run_kernel.h). An mpmd_map program's errors
// are prefixed with its label (KernelPrograms::label), anything not a
// meshsim::Error becoming a DeviceError first; run_kernel's pass as thrown.
void run_kernel_program(DeviceContext& ctx, const KernelSpec& spec, const KernelPrograms& programs,
                        int program, FunctionRef<void(KernelContext&)> body);

}  // namespace meshsim
