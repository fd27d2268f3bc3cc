#pragma once
// Runtime: a pool of simulated devices, each a persistent OS thread that
// sleeps (futex) between launches. Device ids run from 0 to num_devices() - 1;
// Runtime(n) starts devices 0..n-1 at once, Runtime() starts none, and a
// device's thread starts on the first launch that names it.
//
// launch(mesh, body) runs body(DeviceContext&) on every device of `mesh` and
// returns when all of them have finished. If any device throws, every wait of
// the launch is cancelled, and the first error is rethrown here with its
// device id (meshsim errors keep their type; other exceptions become a
// DeviceError). A DeadlockError is thrown when every device is blocked inside
// meshsim, or a CollectiveMismatchError when those devices wait in one
// collective over different groups. The runtime stays usable after any
// failure.
//
// Thread safety: launch() may be called from several threads at once. Launches
// on disjoint device sets run concurrently; launches that share a device run
// one after the other. A launch from inside a device's body (directly, or
// through shard_map / pmap) runs when its devices are free or held by
// unrelated launches; if the launch running that body, or one enclosing it,
// holds one of them, it would wait for itself forever and throws
// RuntimeUsageError at once. Destroying a Runtime while launches run is a program
// error: the destructor logs it and waits for them to finish; launches
// started after destruction began throw RuntimeUsageError.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/wait_policy.h"

namespace spdlog {
class logger;
}

namespace meshsim {

struct DeviceState;
class RuntimeImpl;

struct RuntimeOptions {
  // The device limit of a Runtime created without a device count: enough for
  // the largest meshes meshsim is tested with (4096 devices on 2 cores). A
  // device costs nothing until a launch names it (then a thread, ~8 MiB of
  // address space for its stack); the limit itself costs ~32 bytes a device.
  static constexpr int kDefaultMaxDevices = 4096;
  // The device ids this runtime accepts: 0 .. max_devices - 1. Unset: n for
  // Runtime(n) (which then throws InvalidArgumentError if it is less than
  // n), kDefaultMaxDevices for Runtime().
  std::optional<int> max_devices;
  // Overrides the adaptive spin/yield policy of device waits (for experiments).
  std::optional<WaitPolicy> wait_policy;
  // A launch still running after this long fails with a TimeoutError that says
  // where every device is; zero turns the timeout off. A warning with the same
  // report is logged at `warn_fraction` of it. Waits inside meshsim are
  // cancelled at the timeout; a device busy in its own code cannot be, and the
  // launch returns only once it does.
  std::chrono::milliseconds launch_timeout{0};
  double warn_fraction = 0.5;
};

class Runtime {
 public:
  // Starts no device thread: they start on demand, up to options.max_devices.
  explicit Runtime(RuntimeOptions options = {});
  // Starts the threads of devices 0..num_devices-1 now.
  explicit Runtime(int num_devices, RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // How many devices a mesh may use: ids 0 .. num_devices() - 1 (the limit,
  // whether or not their threads have started yet).
  int num_devices() const;
  // Device threads started so far.
  int started_devices() const;

  // Runs `body` on every device of `mesh`; see the class comment. Throws
  // RuntimeUsageError if the mesh names a device id of num_devices() or more
  // (naming the mesh, the id and the limit).
  // `body` is owned for the call (a std::function), so a stored callable
  // cannot dangle.
  void launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body);

  // The runtime's spdlog logger (include <spdlog/logger.h> to use it): its
  // level starts at MESHSIM_LOG_LEVEL (default warn).
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
