#pragma once
// DeviceState: everything the runtime keeps for one simulated device across
// launches — its thread (thread mode), its task slot, its owner, its waiters,
// its context and its group cache. Lives as long as the Runtime. Internal to runtime/.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/wait_note.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/waiter.h"
#include "meshsim/runtime/time/internal/launch_time.h"
#include "meshsim/runtime/trace/internal/device_trace.h"

namespace meshsim {

class KernelContext;
class Launch;
class RuntimeImpl;

struct alignas(64) DeviceState {
  DeviceState(int id, int core, int agent, RuntimeImpl& runtime)
      : id(id), core(core), agent(agent), runtime(runtime), context(*this) {}

  // The device, as its users name it (DeviceContext::device_id, messages).
  const int id;
  // Which of the device's cores this is: 0, or, for an mpmd_map that runs
  // several functions on one device, the function's index among them. Each
  // core is an agent of its own (thread or fiber, waits, clock, trace).
  const int core;
  // The agent's id, unique in the runtime: id + core * max_devices. A
  // launch's mesh holds agent ids, so links, rendezvous and virtual time,
  // which key on mesh ids, tell the cores of one device apart. Equal to
  // `id` for core 0.
  const int agent;
  // "device 3", or "device 3 core 1": how messages name it.
  std::string name() const { return agent_name(id, core); }
  RuntimeImpl& runtime;
  std::thread thread;  // thread mode only

  // The task: written by the launching thread before it advances `work` (in
  // fiber mode, before it posts the device's fiber).
  WaitWord work;
  Launch* launch = nullptr;
  int position = 0;  // in the launch's mesh

  // The launch that owns this device, null when free: launches on
  // overlapping device sets are serialized on it, and a launch from a device
  // body reads it to refuse a device an enclosing launch holds.
  std::atomic<const Launch*> owner{nullptr};
  // Advanced each time an owner lets the device go: a claimant on a device
  // fiber parks on it (a fiber must not block its worker in atomic::wait).
  WaitWord unclaimed;

  // Waits inside a launch (cancellable, seen by the deadlock detector and the
  // aborter) and, in thread mode, waits for the next task, kept apart so an
  // abort can never poison the idle wait.
  Waiter waiter;
  Waiter idle_waiter;

  // Where the device is, for deadlock and timeout reports (read by others).
  std::atomic<const char*> current_op{nullptr};
  std::atomic<const Rendezvous*> current_group{nullptr};
  std::atomic<uint64_t> collectives_done{0};  // written by the device only
  // Set while its body is inside a launch it made (on any runtime).
  std::atomic<bool> in_nested_launch{false};
  WaitNote wait_note;  // set while it waits for a semaphore's count
  // Set when the device settled before its body ended (Launch::fail_and_settle).
  bool settled_early = false;
  // What the device's collectives ran in the current launch (cleared when it
  // starts; capacity kept, so recording allocates only in a first launch).
  std::vector<CollectiveRecord> records;
  size_t records_dropped = 0;

  // Its virtual clock in the current launch (off unless the launch keeps time).
  DeviceClock clock;
  // Its event recorder in the current launch (off unless the launch traces).
  DeviceTrace trace;
  // What the device's code receives; the launch enters and leaves it.
  DeviceContext context;
  // The contexts of its kernels (kernel/), by nesting depth: kept for the
  // runtime's life, so a reference kept past its kernel fails cleanly.
  std::vector<std::unique_ptr<KernelContext, void (*)(KernelContext*)>> kernel_contexts;

  // Per-device cache of group lookups: no lock on a hit. Keyed by MeshState
  // id, never reused, so an entry of an evicted MeshState never matches (and is
  // never read); holds at most Runtime::kMaxInternedMeshes meshes, dropping the
  // least recently used.
  struct CachedGroup {
    const AxisIndexGroups* index_groups;  // points into the GroupSet
    GroupRef ref;
  };
  struct CachedMesh {
    std::vector<CachedGroup> groups;
    // group_cache_clock when the device last turned to this mesh from
    // another: the order of those turns is the order of last uses, so the
    // eviction is still of the least recently used. Lookups that follow on
    // the same mesh write nothing: the entry is a heap node that may share a
    // cache line with what a peer reads, and a write per call made that line
    // cross between cores on every collective (2-device 8-byte psum in the
    // CLI: 0.50 -> 0.29 us).
    uint64_t last_use = 0;
  };
  std::unordered_map<uint64_t, CachedMesh> group_cache;
  // The entry of the mesh looked up last (a node of group_cache, whose
  // address is stable until it is erased): a device's collectives mostly
  // follow each other on one mesh, and this skips hashing its id.
  uint64_t last_mesh_id = UINT64_MAX;  // no mesh yet
  CachedMesh* last_mesh = nullptr;
  uint64_t group_cache_clock = 0;
  uint64_t group_cache_misses = 0;  // lookups that went to MeshState (for tests)
};

}  // namespace meshsim
