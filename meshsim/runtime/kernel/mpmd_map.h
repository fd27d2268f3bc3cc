#pragma once
// mpmd_map: Pallas's mpmd_map — several (mesh, function) pairs in one
// launch, each function a kernel (run_kernel.h) on every device of its mesh:
// a producer mesh and a consumer mesh of a pipeline, a parameter-server
// program next to its workers.
//
// The launch runs on a one-axis mesh named kMpmdAxis over the programs'
// devices: program 0's in its mesh's position order, then program 1's, and
// so on. A device's KernelContext::device_id() is its position there (its
// logical id); KernelContext::program(), program_mesh(), program_device_id()
// and axis_index() describe it within its own program, and
// KernelContext::logical_id(program, id) names a device of any program. All
// programs share `spec`: every device has the same symmetric buffers and
// semaphores (and barrier semaphore, with a collective id), so copies and
// signals cross programs as they cross devices. KernelContext::device() is
// the launch's DeviceContext: psend / precv / ppermute over kMpmdAxis, with
// logical ids as axis indices, reach every program.
//
// The launch is one launch: a program that fails (its device's error)
// cancels every other program's waits, and is rethrown with its device id
// and "mpmd_map program N: " in front (anything not a meshsim::Error as a
// DeviceError); waits that can never complete, in any program, fail with a
// DeadlockError; the Runtime's launch timeout covers it; a semaphore left
// non-zero at exit is a SemaphoreError of the program whose device holds it.
//
// Several functions on one device: a device in the meshes of several
// programs (the core types of one chip, as the seed uses it) runs each
// program's function on a core of its own, core 0 for the first such
// program, core 1 for the next, up to 8. Each has its launch position
// (logical id), its own waits, clock and trace track (TraceEvent::core;
// messages say "device 3 core 1"), and all share the device's memory: its
// buffers and semaphores are one, so what one function writes or signals
// on its device the others read or wait for, a copy or signal to the
// position of another function on the same device lands in that same
// memory, and two functions may wait on one semaphore (each wait takes its
// own units). Race detection tells the functions apart ("device 3
// (mpmd_map program 1)"); a copy onto the memory it reads from is no race
// with itself. In virtual time they share the device's topology node
// (VirtualTime::nodes placing them apart is an InvalidArgumentError; by
// default the devices take nodes 0, 1, ... in the order of their first
// launch position), a kernel copy between them moves at
// DeviceSpec::memory_bandwidth and a signal between them is free (with
// none in the ClockLog replay either); psend / precv and collectives among
// them are priced by the network model as transfers from a node to itself
// (free in the built-in models). When functions of one device wait on one
// semaphore, which signal each takes depends on the host's scheduling, and
// so may their times (as for signals racing for one semaphore,
// virtual_time.h). KernelContext::device().device_id() is the device;
// device().mesh() is the launch's mesh, whose further cores are
// runtime-internal ids (TraceEvent, Communicator::device_id and messages
// name devices). In thread mode each further core is a thread of the
// runtime's, started on first use and kept, as device threads are.
//
// Checked before any device runs: at least one program; a body in each
// (InvalidArgumentError naming the program); every mesh's devices within the
// runtime (RuntimeUsageError); an axis name two meshes share has one size
// in both, and no device in more than 8 meshes (MeshError naming the axis
// or the device and its programs). Virtual time and traces as in
// run_kernel, by launch position (the logical id): that is how
// VirtualTime::nodes places the devices on a topology and how
// LaunchRecord::end_times and events are ordered.
//
// Thread safety and nesting: as Runtime::launch (exec/runtime.h); the
// programs and their bodies must outlive the call.

#include <functional>
#include <string_view>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/kernel_context.h"
#include "meshsim/runtime/kernel/kernel_spec.h"

namespace meshsim {

// The axis of an mpmd_map's launch mesh.
inline constexpr std::string_view kMpmdAxis = "mpmd";

// One program of an mpmd_map: a function and the devices it runs on.
struct MpmdProgram {
  Mesh mesh;
  std::function<void(KernelContext&)> body;
};

void mpmd_map(Runtime& runtime, const std::vector<MpmdProgram>& programs, const KernelSpec& spec,
              const LaunchOptions& options = {});

}  // namespace meshsim
