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
// Virtual time (time/virtual_time.h): a copy departs at its issuer's clock
// when it starts and is priced by the network model as one transfer of its
// bytes; the wait that takes its receive semaphore's units moves the
// receiver's clock to its arrival (compute between the start and that wait
// overlaps it). A copy's send completes at its departure: its issuer pays
// nothing for it. A semaphore signal to another device is a transfer of 0
// bytes; a copy within the device moves the clock to its departure plus
// bytes / DeviceSpec::memory_bandwidth, when set (each copy priced alone:
// copies at once do not share the bandwidth). A wait takes its semaphore's
// signals oldest first, so
// the times are a function of the program, in every copy mode and execution
// mode, unless signals from several devices race for one semaphore and a
// wait takes only some of them. The kernel's entry and exit cost nothing.
// Traces (LaunchOptions::trace): AsyncCopy::start, its waits,
// semaphore_signal and semaphore_wait are transfer events; a copy's start
// and a signal to another device carry a flow to the wait that takes it
// (the last such signal, for a wait that takes several).

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
