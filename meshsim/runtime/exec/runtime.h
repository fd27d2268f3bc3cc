#pragma once
// Runtime: a pool of simulated devices, each a persistent OS thread that
// sleeps (futex) between launches.
//
// launch(mesh, body) runs body(DeviceContext&) on every device of `mesh` and
// returns when all of them have finished. If any device throws, every wait of
// the launch is cancelled, and the first error is rethrown here with its
// device id (meshsim errors keep their type; other exceptions become a
// DeviceError). A DeadlockError is thrown when every device is blocked inside
// meshsim. The runtime stays usable after any failure.
//
// Thread safety: launch() may be called from several threads at once. Launches
// on disjoint device sets run concurrently; launches that share a device run
// one after the other. Destroying a Runtime while launches run is a program
// error: the destructor logs it and waits for them to finish; launches
// started after destruction began throw RuntimeUsageError.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <list>
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
  explicit Runtime(int num_devices, RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int num_devices() const { return static_cast<int>(devices_.size()); }

  // Runs `body` on every device of `mesh`; see the class comment. Throws
  // RuntimeUsageError if the mesh names a device this runtime does not have.
  // `body` is owned for the call (a std::function), so a stored callable
  // cannot dangle.
  void launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body);

  // The runtime's spdlog logger (include <spdlog/logger.h> to use it): its
  // level starts at MESHSIM_LOG_LEVEL (default warn).
  spdlog::logger& logger() { return *logger_; }

  // The runtime keeps its own copy of each mesh launched on (with the
  // rendezvous and channels of its groups) for reuse, at most this many: the
  // least recently launched one that no running launch uses is dropped first.
  static constexpr size_t kMaxInternedMeshes = 256;
  // How many it keeps now (for tests).
  size_t interned_mesh_count();

 private:
  // The runtime's copy of `mesh`, created on first use. The caller holds the
  // pointer for the whole launch: that pins the copy against eviction.
  std::shared_ptr<MeshState> intern(const Mesh& mesh);
  void wait_for(Launch& launch);
  void device_main(DeviceState& device);
  std::vector<DeviceState*> acquire(const Mesh& mesh);
  void release(const std::vector<DeviceState*>& devices);

  RuntimeOptions options_;
  std::shared_ptr<spdlog::logger> logger_;
  // launch() calls in progress: the destructor waits for them. A mutex, not
  // an atomic wait: the last launch must not touch the Runtime after the
  // destructor may have seen the count reach zero.
  std::mutex in_flight_mu_;
  std::condition_variable in_flight_cv_;
  int launches_in_flight_ = 0;
  bool stopping_ = false;
  std::vector<std::unique_ptr<DeviceState>> devices_;

  // Interned meshes, most recently launched first, and an index by mesh hash.
  struct Interned {
    size_t hash;
    std::shared_ptr<MeshState> state;
  };
  std::mutex meshes_mu_;
  std::list<Interned> meshes_;
  std::unordered_multimap<size_t, std::list<Interned>::iterator> mesh_index_;
};

}  // namespace meshsim
