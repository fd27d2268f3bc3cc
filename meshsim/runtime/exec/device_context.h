#pragma once
// DeviceContext: the handle a device's code receives in a launch — who it is
// (device id, mesh position and coordinates) and the axis queries.
//
// It may be used only inside the launch body it was passed to, by that
// device's own code (its thread, or in fiber mode its fiber). Every method
// (and every collective given it) throws RuntimeUsageError otherwise — from
// another thread or device, or after the launch returned — naming the device. Each device has one context object for the
// life of its Runtime, so a pointer kept past the launch stays safe to call
// (and fails) until the Runtime is destroyed; in a later launch on the same
// device it is that launch's context again. Several runtimes can
// run in one process. The hooks
// collectives are built on (group lookup, waits, operation scopes) are
// internal (exec/internal/device_hooks.h).

#include <span>
#include <string>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/collective_record.h"

namespace meshsim {

class Launch;
struct DeviceState;

class DeviceContext {
 public:
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int device_id() const;
  // Index of this device in the launch mesh (row-major over its axes).
  int position() const;
  // The launch's mesh and this device's coordinates in it: the runtime's
  // copy, valid during the launch only (the runtime may drop it once the
  // launch ended: copy the Mesh to keep it).
  const Mesh& mesh() const;
  std::span<const int> coords() const;

  // jax.lax.axis_index / axis_size: over one axis or several, major-to-minor.
  // AxisError for an axis the mesh does not have or a repeated one.
  int axis_index(const AxisNames& axes) const;
  int axis_size(const AxisNames& axes) const;

  // The collectives this device ran in the current launch, in call order:
  // front-end, algorithm, what chose it (at most kMaxCollectiveRecords; later
  // calls are only counted in dropped_collective_records()). The strings stay
  // valid as long as the Runtime.
  static constexpr size_t kMaxCollectiveRecords = 1024;
  std::span<const CollectiveRecord> collective_records() const;
  size_t dropped_collective_records() const;

  // Virtual time (time/virtual_time.h): this device's clock in seconds, 0
  // when the launch keeps no virtual time. RuntimeUsageError in a launch
  // that prices its transfers after it ends (congestion-aware network,
  // external clock): its clocks are known only then.
  double now() const;
  // Moves the clock forward by `seconds` of this device's own work (a no-op
  // without virtual time). InvalidArgumentError naming the device unless
  // `seconds` is finite and >= 0.
  void advance(double seconds);
  // advance() by a kernel of `flops` floating-point operations moving
  // `bytes` of memory, on the launch's DeviceSpec roofline: max(flops /
  // peak_flops, bytes / memory_bandwidth). InvalidArgumentError for a value
  // that is negative or not finite, or, with virtual time on, a DeviceSpec
  // field the kernel needs that is not > 0.
  void compute(double flops, double bytes);
  // Lets other devices run before this one goes on: in fiber mode its worker
  // runs its other runnable fibers first; in thread mode the thread calls
  // sched_yield. For device code that polls memory another device writes
  // (a spin-wait of its own): in fiber mode such a loop must call this, or
  // the device it waits for may never run (see ExecutionMode::kFibers).
  // CancelledError once the launch failed (another device's error, a
  // deadlock or a timeout), so such a loop ends with the launch.
  void yield() const;

 private:
  friend class Launch;
  friend struct DeviceHooks;
  friend struct DeviceState;
  explicit DeviceContext(DeviceState& device) : device_(device) {}

  // Whether called on the device's thread inside a launch; otherwise
  // check_usable throws RuntimeUsageError naming `what` and the device.
  bool usable() const;
  [[noreturn]] void throw_unusable(const std::string& what) const;
  void check_usable(const char* what) const {
    if (!usable()) throw_unusable(what);
  }
  // Set by the launch around the body; only the device's thread reads them.
  void enter(Launch& launch, int position) {
    launch_ = &launch;
    position_ = position;
  }
  void leave() { launch_ = nullptr; }

  DeviceState& device_;
  Launch* launch_ = nullptr;
  int position_ = 0;
};

}  // namespace meshsim
