#pragma once
// RuntimeImpl: everything a Runtime owns — its devices and their threads, the
// launches in flight, the interned meshes — kept out of the public header so
// that users compile none of it. Runtime (exec/runtime.h) forwards to it; the
// contracts are the ones stated there.

#include <spdlog/logger.h>

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/comm/internal/fabric.h"
#include "meshsim/runtime/comm/internal/group_layouts.h"
#include "meshsim/runtime/exec/internal/cpu_binding.h"
#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/runtime_extension.h"
#include "meshsim/runtime/exec/runtime.h"
#include "meshsim/runtime/kernel/internal/collective_ids.h"

namespace meshsim {

struct DeviceState;
class FiberScheduler;
class Launch;
class MeshState;

class RuntimeImpl {
 public:
  // Starts devices 0..start_now-1; the others start on first use, up to
  // max_devices. InvalidArgumentError for a limit below 1 or below start_now.
  RuntimeImpl(RuntimeOptions options, int max_devices, int start_now);
  // Waits for launches in flight (logging that it must), then stops every
  // device thread.
  ~RuntimeImpl();
  RuntimeImpl(const RuntimeImpl&) = delete;
  RuntimeImpl& operator=(const RuntimeImpl&) = delete;

  // The most functions an mpmd_map runs on one device (its cores).
  static constexpr int kMaxCores = 8;

  int num_devices() const { return max_devices_; }
  // Agent ids (DeviceState::agent): core `core` of device `device`, and back.
  int agent_id(int device, int core) const { return device + core * max_devices_; }
  int device_of(int agent) const { return agent % max_devices_; }
  int core_of(int agent) const { return agent / max_devices_; }
  int started_devices() const { return num_started_.load(std::memory_order_relaxed); }
  // Whether a launch (running, or still claiming its devices) holds device
  // `id` (for tests).
  bool claimed(int id) const;
  ExecutionMode execution() const { return execution_; }
  bool binds_threads() const { return binding_.enabled() && !binding_.refused(); }
  int fiber_workers() const;
  FiberStackStats fiber_stack_stats() const;
  void launch(const Mesh& mesh, const std::function<void(DeviceContext&)>& body,
              const LaunchOptions& options);
  // A launch whose mesh holds agent ids (DeviceState::agent: core c of
  // device d is d + c * num_devices(), c < kMaxCores), for mpmd_map's
  // functions that share a device. The caller checks the ids; a launch that
  // holds a core c > 0 of a device also holds its core 0, which is what
  // other launches claim.
  void launch_agents(const Mesh& mesh, const std::function<void(DeviceContext&)>& body,
                     const LaunchOptions& options);
  spdlog::logger& logger() { return *logger_; }
  size_t interned_mesh_count();
  Fabric& fabric() { return fabric_; }
  const GroupLayouts& group_layouts() const { return group_layouts_; }
  // The collective ids its kernels hold (kernel/).
  CollectiveIds& collective_ids() { return collective_ids_; }
  // RuntimeUsageError naming the mesh and the device unless every device of
  // `mesh` is below num_devices() (launch() checks its mesh; mpmd_map each
  // program's, to name the program).
  void check_device_ids(const Mesh& mesh) const;
  // `mesh` as messages name it: Mesh::to_string, but a launch_agents mesh
  // names a device's further cores "3 core 1" instead of their agent ids.
  std::string describe(const Mesh& mesh) const;
  // Expires when the Runtime is destroyed: what outlives it by mistake (a
  // plan) can tell, instead of calling into freed memory.
  std::weak_ptr<const void> lifetime() const { return lifetime_; }

  // The collectives layer's state for this runtime, made by `make` on first
  // use (thread-safe; later calls take no lock).
  RuntimeExtension& extension(FunctionRef<std::unique_ptr<RuntimeExtension>()> make);
  // Runs `change` while no launch of this runtime runs (none can start until
  // it returns); RuntimeUsageError naming `what` if one is running or the
  // caller is a device thread of this runtime.
  void while_idle(const char* what, FunctionRef<void()> change);
  // Runs `read` so that no while_idle change runs at the same time: under the
  // same lock on a host thread; as is on a device thread of a running launch
  // (no change can run while a launch does).
  void without_changes(FunctionRef<void()> read);

 private:
  // The runtime whose while_idle change this thread is running, if any.
  static thread_local const RuntimeImpl* changing_;
  // The runtime's copy of `mesh`, created on first use. The caller holds the
  // pointer for the whole launch: that pins the copy against eviction.
  std::shared_ptr<MeshState> intern(const Mesh& mesh);
  // Noexcept: the devices run the launch until it is done, so nothing may
  // unwind past them (only formatting a timeout report can throw: bad_alloc).
  // `own_core`: the caller ran worker 0's share of the fibers itself
  // (FiberRunner::run_to_end) and the other workers have a core each, so the
  // caller holds a core that no device of the launch needs: it may spin.
  void wait_for(Launch& launch, bool own_core) noexcept;
  void device_main(DeviceState& device);
  // Wakes every started device thread to exit, and joins them.
  void stop_devices();
  // Device `id`, its thread started if it was not yet (thread-safe).
  DeviceState& device(int id);
  // The agent `agent` (DeviceState::agent) likewise.
  DeviceState& agent(int agent);
  // Makes and publishes in started_ the state of core `core` of device `id`
  // (under grow_mu_), with its thread in thread mode.
  DeviceState& start_agent(int id, int core);
  void run(const Mesh& mesh, const std::function<void(DeviceContext&)>& body,
           const LaunchOptions& options);
  // The device whose code calls (thread or fiber), if it is one of this runtime's.
  DeviceState* calling_device() const;
  // Throws RuntimeUsageError if `caller`'s launch, or one enclosing it, holds
  // a device of `mesh`.
  void check_not_nested_on_own_devices(const Mesh& mesh, const DeviceState& caller) const;

  RuntimeOptions options_;
  std::shared_ptr<const int> lifetime_ = std::make_shared<const int>(0);
  const ExecutionMode execution_;
  const int max_devices_;
  const CpuBinding binding_;  // of the device threads, or the fiber workers
  std::shared_ptr<spdlog::logger> logger_;
  // launch() calls in progress: the destructor waits for them. Counted under
  // a mutex, which the last launch holds until it no longer touches the
  // Runtime: the destructor, woken by launches_ended_, sees the count reach
  // zero only under that mutex.
  std::mutex in_flight_mu_;
  // Advanced (under in_flight_mu_) each time the last launch in flight ends.
  WaitWord launches_ended_;
  int launches_in_flight_ = 0;
  bool stopping_ = false;

  // Devices by id, null until started; published with a release store, read
  // without a lock.
  std::unique_ptr<std::atomic<DeviceState*>[]> devices_;
  std::mutex grow_mu_;
  std::vector<std::unique_ptr<DeviceState>> started_;  // guarded by grow_mu_; every core
  std::unordered_map<int, DeviceState*> cores_;        // guarded by grow_mu_; cores > 0 by agent
  std::atomic<int> num_started_{0};

  // Interned meshes, most recently launched first, and an index by mesh hash.
  struct Interned {
    size_t hash;
    std::shared_ptr<MeshState> state;
  };
  std::mutex meshes_mu_;
  std::list<Interned> meshes_;
  std::unordered_multimap<size_t, std::list<Interned>::iterator> mesh_index_;

  // Declared before the extension: algorithms registered there may hold
  // nothing of the fabric, but the fabric must outlive every device.
  Fabric fabric_;
  // The group layouts of the interned meshes, by shape (held weakly).
  GroupLayouts group_layouts_;
  CollectiveIds collective_ids_;
  // Fiber mode only: the workers and the fiber stacks.
  std::unique_ptr<FiberScheduler> fibers_;
  // Launching threads running fibers of their launch (run_to_end), or waiting
  // for the rest of it after them, right now.
  std::atomic<int> hosts_running_fibers_{0};
  std::mutex extension_mu_;
  std::unique_ptr<RuntimeExtension> extension_;
  std::atomic<RuntimeExtension*> extension_ptr_{nullptr};
};

// Internal access to a Runtime's implementation, for the layers above.
struct RuntimeHooks {
  static RuntimeImpl& impl(Runtime& runtime) { return *runtime.impl_; }
};

}  // namespace meshsim
