#pragma once
// DeviceContext: the handle a device's code receives in a launch — who it is
// (device id, mesh position and coordinates) and the axis queries.
//
// It is valid only inside the launch body it was passed to, on that device's
// thread. It holds no global or thread-local state: several runtimes can run
// in one process. The hooks collectives are built on (group lookup, waits,
// operation scopes) are internal (exec/internal/device_hooks.h).

#include <span>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/comm/axis_names.h"

namespace meshsim {

class Launch;
struct DeviceState;

class DeviceContext {
 public:
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  int device_id() const;
  // Index of this device in the launch mesh (row-major over its axes).
  int position() const { return position_; }
  const Mesh& mesh() const;
  std::span<const int> coords() const;

  // jax.lax.axis_index / axis_size: over one axis or several, major-to-minor.
  // AxisError for an axis the mesh does not have or a repeated one.
  int axis_index(AxisNames axes) const;
  int axis_size(AxisNames axes) const;

 private:
  friend class Launch;
  friend struct DeviceHooks;
  DeviceContext(Launch& launch, DeviceState& device, int position);

  Launch& launch_;
  DeviceState& device_;
  int position_;
};

}  // namespace meshsim
