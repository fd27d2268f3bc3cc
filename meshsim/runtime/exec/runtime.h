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

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/wait_policy.h"

namespace spdlog {
class logger;
}

namespace meshsim {

struct DeviceState;
class Launch;
class MeshState;

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
  int num_devices() const { return max_devices_; }
  // Device threads started so far.
  int started_devices() const { return num_started_.load(std::memory_order_relaxed); }

  // Runs `body` on every device of `mesh`; see the class comment. Throws
  // RuntimeUsageError if the mesh names a device id of num_devices() or more
  // (naming the mesh, the id and the limit).
  // `body` is owned for the call (a std::function), so a stored callable
  // cannot dangle.
  void launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body);

  // The runtime's spdlog logger (include <spdlog/logger.h> to use it): its
  // level starts at MESHSIM_LOG_LEVEL (default warn).
  spdlog::logger& logger() { return *logger_; }

 private:
  Runtime(RuntimeOptions options, int max_devices, int start_now);
  // The runtime's copy of `mesh`, created on first use.
  MeshState& intern(const Mesh& mesh);
  // Noexcept: the devices run the launch until it is done, so nothing may
  // unwind past them (only formatting a timeout report can throw: bad_alloc).
  void wait_for(Launch& launch) noexcept;
  void device_main(DeviceState& device);
  // Wakes every started device thread to exit, and joins them.
  void stop_devices();
  void check_device_ids(const Mesh& mesh) const;
  // Device `id`, its thread started if it was not yet (thread-safe).
  DeviceState& device(int id);
  // The device whose thread calls, if it is one of this runtime's.
  DeviceState* calling_device() const;
  // Throws RuntimeUsageError if `caller`'s launch, or one enclosing it, holds
  // a device of `mesh`.
  void check_not_nested_on_own_devices(const Mesh& mesh, const DeviceState& caller) const;

  RuntimeOptions options_;
  const int max_devices_;
  std::shared_ptr<spdlog::logger> logger_;
  // launch() calls in progress: the destructor waits for them. A mutex, not
  // an atomic wait: the last launch must not touch the Runtime after the
  // destructor may have seen the count reach zero.
  std::mutex in_flight_mu_;
  std::condition_variable in_flight_cv_;
  int launches_in_flight_ = 0;
  bool stopping_ = false;

  // Devices by id, null until started; published with a release store, read
  // without a lock.
  std::unique_ptr<std::atomic<DeviceState*>[]> devices_;
  // The started devices by their thread's id (open addressing, a power of two
  // at least twice max_devices_ long), so launch() can tell that it runs on a
  // device thread of this runtime without any thread-local state.
  std::unique_ptr<std::atomic<DeviceState*>[]> by_thread_;
  size_t by_thread_mask_;
  std::mutex grow_mu_;
  std::vector<std::unique_ptr<DeviceState>> started_;  // guarded by grow_mu_
  std::atomic<int> num_started_{0};

  std::mutex meshes_mu_;
  std::unordered_map<size_t, std::vector<std::unique_ptr<MeshState>>> meshes_;
};

}  // namespace meshsim
