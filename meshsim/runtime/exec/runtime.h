#pragma once
// Runtime: a pool of simulated devices. Device ids run from 0 to
// num_devices() - 1. How a device runs is the runtime's ExecutionMode: in
// thread mode each device is a persistent OS thread that sleeps (futex)
// between launches; Runtime(n) starts devices 0..n-1 at once, Runtime() starts
// none, and a device's thread starts on the first launch that names it. In
// fiber mode each device's part of a launch is a fiber on a few worker threads.
//
// launch(mesh, body) runs body(DeviceContext&) on every device of `mesh` and
// returns when all of them have finished. If any device throws, every wait of
// the launch is cancelled, and the first error is rethrown here with its
// device id (meshsim errors keep their type; other exceptions become a
// DeviceError; an error a body let escape from a launch it made is that
// body's device's, with the inner device in its message). A DeadlockError is
// thrown when every device is blocked inside meshsim, or a
// CollectiveMismatchError when those devices wait in one
// collective over different groups; also by one body of a cycle of launches
// from device bodies that wait for each other's devices (the one with the
// smallest device id, within ~20 ms). The runtime stays usable after
// any failure.
//
// Thread safety: launch() may be called from several threads at once. Launches
// on disjoint device sets run concurrently; launches that share a device run
// one after the other. A launch from inside a device's body (directly, or
// through shard_map / pmap) runs when its devices are free or held by
// unrelated launches; if the launch running that body, or one enclosing it
// (also through launches on another Runtime), holds one of them, it would wait
// for itself forever and throws RuntimeUsageError at once. Destroying a
// Runtime while launches run is a program error: the destructor logs it and
// waits for them to finish; launches
// started after destruction began throw RuntimeUsageError.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/launch_record.h"
#include "meshsim/runtime/exec/wait_policy.h"
#include "meshsim/runtime/time/virtual_time.h"

namespace spdlog {
class logger;
}

namespace meshsim {

struct DeviceState;
class RuntimeImpl;

// How a Runtime runs its devices. Both modes run every collective, algorithm,
// psend/precv, async handle, cancellation, deadlock detection and timeout the
// same way; they differ in cost.
enum class ExecutionMode {
  // Each device is an OS thread (started on first use, kept until the Runtime
  // ends; ~8 MiB of address space for its stack). Waits spin while every
  // device can have a core, then yield, then sleep on a futex. The default:
  // best while a mesh has no more devices than cores.
  kThreads,
  // Each device's part of a launch is a stackful fiber (Boost.Context) on a
  // few worker threads (RuntimeOptions::fiber_workers), each running a
  // contiguous block of the launch's mesh positions (so the groups of a minor
  // axis meet within one worker). A wait parks the fiber and its
  // worker runs the next one, in user space: a meeting of 64 or 4096 devices
  // on 2 cores costs switches of tens of nanoseconds instead of the kernel's
  // microseconds. A device between launches holds no stack.
  // The rule of fiber mode: device code must not block its worker thread on
  // something another device releases (a std::mutex or condition variable
  // held across a collective, a sleep while a peer waits): the fibers that
  // would release it may be queued on that very worker, which then waits
  // forever. Waits inside meshsim (collectives, psend/precv, nested launches)
  // always park the fiber instead.
  // The launching thread is one of those threads: unless the runtime has a
  // launch_timeout, it runs the first block of positions itself instead of
  // waiting (worker 0 then has none). Device code sees its thread id,
  // thread_local variables and lock ownership, so it must not lock what the
  // caller holds, nor expect thread_local state to stay its own across a
  // collective (devices share their thread in fiber mode anyway).
  kFibers,
};

// "threads" or "fibers".
const char* to_string(ExecutionMode mode);
// Parses "threads" or "fibers"; InvalidArgumentError naming the text otherwise.
ExecutionMode parse_execution_mode(std::string_view text);
// The MESHSIM_EXEC environment variable when it is set and not empty (not yet
// parsed), else null: what a Runtime whose options choose no mode reads.
const char* execution_mode_variable();

// Fiber mode: the stacks a runtime has mapped. A launch's devices take free
// stacks and give them back when their bodies return, so a runtime maps as
// many as the most devices it ran at once, and an idle device holds none.
struct FiberStackStats {
  size_t stacks = 0;          // mapped
  size_t guarded = 0;         // of them, with a guard page (see fiber_stack_bytes)
  size_t reserved_bytes = 0;  // their address space, guard pages included
  size_t resident_bytes = 0;  // of that, pages in memory (touched by some body)
};

struct RuntimeOptions {
  // The device limit of a Runtime created without a device count: enough for
  // the largest meshes meshsim is tested with (4096 devices on 2 cores). A
  // device costs nothing until a launch names it (then a thread, ~8 MiB of
  // address space for its stack); the limit itself costs ~32 bytes a device.
  static constexpr int kDefaultMaxDevices = 4096;
  // The device ids this runtime accepts: 0 .. max_devices - 1, at most
  // Mesh::kMaxDevices (else InvalidArgumentError). Unset: n for
  // Runtime(n) (which then throws InvalidArgumentError if it is less than
  // n), kDefaultMaxDevices for Runtime().
  std::optional<int> max_devices;
  // Overrides the spin/yield budgets of device waits (for experiments). A wait
  // with a spin phase still shortens it, and skips its yields, while the
  // machine is loaded by other processes (waiter.h). Budgets below 0 or above
  // WaitPolicy::kMaxBudgetNs (1 s) are an InvalidArgumentError.
  std::optional<WaitPolicy> wait_policy;
  // A launch still running after this long fails with a TimeoutError that says
  // where every device is; zero turns the timeout off. A launch from a host
  // thread that waits this long for a device another launch holds fails
  // with a TimeoutError naming the device. A warning with the same
  // report is logged at `warn_fraction` of it (in (0, 1], else the Runtime
  // throws InvalidArgumentError). Waits inside meshsim are cancelled at the
  // timeout, and so is a device's next yield() or kernel call; a device busy
  // in its own code cannot be, and the launch returns only once it does. A
  // timeout beyond a century counts as a century; a negative one is an
  // InvalidArgumentError.
  std::chrono::milliseconds launch_timeout{0};
  double warn_fraction = 0.5;
  // How devices run. Unset: the MESHSIM_EXEC environment variable ("threads"
  // or "fibers"; anything else is an InvalidArgumentError), else threads. A
  // value outside the enum is an InvalidArgumentError too.
  std::optional<ExecutionMode> execution;
  // Fiber mode: worker threads, 0 for one per usable core (usable_cores()).
  int fiber_workers = 0;
  // Fiber mode: each fiber's stack, in bytes (rounded up to pages; at least
  // 64 KiB: meshsim's own frames need some, more under sanitizers), with a
  // guard page below it that turns an overflow into a crash
  // at once (only for the first vm.max_map_count / 4 stacks of the process:
  // each guard costs a kernel mapping, and a 65,536-device mesh would pass
  // the default limit). Only the pages a body touches cost memory; the
  // stacks of a launch's devices are reused by later launches.
  size_t fiber_stack_bytes = size_t{256} << 10;
  // Whether the runtime binds each of its threads to a CPU of its own (as
  // `mpirun --bind-to core` does): the device threads in thread mode (device
  // id k to the k-th usable CPU, counting from the CPU the runtime is made
  // on), the workers in fiber mode. Bound, two devices that meet cannot be
  // left on one CPU by the scheduler, where every meeting costs a pair of
  // context switches (a 2-device psum 2.5 us instead of 0.2 us). Unset: the
  // MESHSIM_BIND environment variable ("cores" or "none"; anything else is
  // an InvalidArgumentError), else bound when the runtime has 2 to
  // usable_cores() such threads (max_devices, or the workers), unbound
  // otherwise: more threads must share CPUs, and the scheduler balances
  // them better unbound.
  // The usable CPUs are those of the thread that makes the runtime (its
  // affinity mask), or, made in a device body, those of the body's runtime.
  // The runtime's other threads (unbound ones, the cores of a device running
  // an mpmd_map) may run on all of them, whatever CPU the thread that
  // started them was bound to. The launching thread is never bound: in fiber
  // mode without a launch_timeout it runs the first block of devices itself,
  // and worker 0 waits. A thread a body starts runs where its device does, as
  // any thread starts on its creator's CPUs. If the system refuses to bind a
  // thread, it runs where it was, and binds_threads() says false.
  std::optional<bool> bind_threads;
  // Virtual time for every launch that does not set its own
  // (LaunchOptions::time), so shard_map and pmap programs keep it too. Unset:
  // launches keep no virtual time. Checked by each launch against its mesh.
  std::shared_ptr<const VirtualTime> virtual_time;
};

// Per-launch settings (Runtime::launch).
struct LaunchOptions {
  // Virtual time for this launch (time/virtual_time.h); unset: the
  // runtime's RuntimeOptions::virtual_time.
  std::shared_ptr<const VirtualTime> time;
  // When set, cleared when the launch begins, and filled once its devices
  // have run (also when it then throws).
  LaunchRecord* record = nullptr;
  // Records every device's events (trace/trace_event.h) into record->events;
  // needs `record` (InvalidArgumentError otherwise). Off, tracing costs one
  // branch per operation.
  bool trace = false;
  // At most this many events per device (more are counted in
  // LaunchRecord::events_dropped). An event takes 128 bytes on its device
  // (kept for its next traced launch) and ~250 bytes once exported, so the
  // default bounds a device's trace to ~6 MB (a ring all-reduce on 64
  // devices records ~130 events per device). At least 1; above INT_MAX is
  // INT_MAX.
  size_t trace_capacity = size_t{1} << 14;
};

class Runtime {
 public:
  // Starts no device thread: they start on demand, up to options.max_devices.
  explicit Runtime(RuntimeOptions options = {});
  // Starts the threads of devices 0..num_devices-1 now.
  explicit Runtime(int num_devices, RuntimeOptions options = {});
  // Waits for the launches in flight (logging that it must). From the body
  // of one of its own devices it would wait for itself: it logs that and
  // calls std::terminate instead.
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // How many devices a mesh may use: ids 0 .. num_devices() - 1 (the limit,
  // whether or not their threads have started yet).
  int num_devices() const;
  // Devices started so far (in thread mode, their threads).
  int started_devices() const;
  // How this runtime runs its devices, and (fiber mode) on how many workers.
  ExecutionMode execution() const;
  int fiber_workers() const;
  // Whether the runtime binds its threads to CPUs (RuntimeOptions::bind_threads),
  // and the system bound every one started so far (each binds itself as it
  // starts, so right after the constructor this may not count them all).
  bool binds_threads() const;
  // Fiber mode: the stacks mapped so far (all zero in thread mode).
  FiberStackStats fiber_stack_stats() const;

  // Runs `body` on every device of `mesh`; see the class comment. Throws
  // RuntimeUsageError if the mesh names a device id of num_devices() or more
  // (naming the mesh, the id and the limit).
  // `body` is owned for the call (a std::function), so a stored callable
  // cannot dangle.
  void launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body);
  // The same with per-launch settings. A virtual time that does not fit the
  // mesh (time/virtual_time.h) is an InvalidArgumentError before any device runs.
  void launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body,
              const LaunchOptions& options);

  // The runtime's spdlog logger (include <spdlog/logger.h> to use it): its
  // level starts at MESHSIM_LOG_LEVEL (default warn; a name spdlog does not
  // know makes the constructor throw InvalidArgumentError).
  spdlog::logger& logger();

  // The runtime keeps its own copy of each mesh launched on (with the
  // rendezvous of its groups) for reuse, at most this many: the
  // least recently launched one that no running launch uses is dropped first.
  static constexpr size_t kMaxInternedMeshes = 256;
  // How many it keeps now (for tests).
  size_t interned_mesh_count();

 private:
  friend struct RuntimeHooks;  // internal access for the collectives layer
  std::unique_ptr<RuntimeImpl> impl_;
};

}  // namespace meshsim
