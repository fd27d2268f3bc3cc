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
// Checked before any device runs: at least one program; a body in each
// (InvalidArgumentError naming the program); every mesh's devices within the
// runtime (RuntimeUsageError); an axis name two meshes share has one size
// in both, and no device is in two meshes (MeshError naming the axis or the
// device and both programs). Several functions on one device (the core
// types of one chip sharing its memory) are not supported yet. Virtual time
// and traces as in run_kernel, by launch position (the logical id): that is
// how VirtualTime::nodes places the devices on a topology and how
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
