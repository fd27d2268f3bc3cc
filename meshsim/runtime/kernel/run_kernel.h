#pragma once
// run_kernel: runs a TPU-style kernel (Pallas's pallas_call with remote
// DMAs and semaphores, Mosaic's collective kernels) on every device of the
// calling launch's mesh.
//
// Every device of the mesh calls run_kernel with the same spec (a
// collective: CollectiveMismatchError naming both sides otherwise; a device
// that never calls it leaves the others in a DeadlockError). The devices
// meet, each allocates the spec's buffers (zero-filled) and semaphores (0),
// and `body(KernelContext&)` runs on each. When every device's body has
// returned, the devices meet again; then each checks that its semaphores
// are back at 0 (SemaphoreError naming the device, the semaphore and its
// value) and frees its buffers. A body's error fails the launch as any
// device error does; the buffers are freed only once no peer can still
// write them.
//
// Not yet: virtual time (RuntimeUsageError in a launch that keeps it) and
// traces (kernel operations are not recorded).

#include <type_traits>

#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/kernel/kernel_context.h"
#include "meshsim/runtime/kernel/kernel_spec.h"

namespace meshsim {

namespace detail {
void run_kernel(DeviceContext& ctx, const KernelSpec& spec, void* body,
                void (*call)(void* body, KernelContext& kernel));
}  // namespace detail

template <class Body>
  requires std::is_invocable_v<Body&, KernelContext&>
void run_kernel(DeviceContext& ctx, const KernelSpec& spec, Body&& body) {
  using B = std::remove_reference_t<Body>;
  detail::run_kernel(ctx, spec, const_cast<void*>(static_cast<const void*>(&body)),
                     [](void* b, KernelContext& kernel) { (*static_cast<B*>(b))(kernel); });
}

}  // namespace meshsim
