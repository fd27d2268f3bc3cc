#pragma once
// DeviceId: which device of a kernel a remote copy or a semaphore signal
// addresses, as Pallas's device_id with DeviceIdType.LOGICAL (the device's
// position in the launch's mesh, row-major over its axes; what
// KernelContext::device_id() returns) or DeviceIdType.MESH (its coordinates
// in the caller's program's mesh: the launch's mesh in run_kernel; in
// mpmd_map, KernelContext::logical_id reaches other programs). A plain int
// is a logical id. The kernel checks the id against its mesh (DeviceIdError
// naming the id and the mesh).

#include <string>
#include <vector>

namespace meshsim {

class Mesh;

class DeviceId {
 public:
  DeviceId(int logical) : logical_(logical) {}  // NOLINT: an int is a logical id
  static DeviceId logical(int id) { return DeviceId(id); }
  // One coordinate per mesh axis, in the mesh's axis order.
  static DeviceId mesh(std::vector<int> coords);

  // The position in `mesh` this id names; DeviceIdError unless it names one.
  int position_in(const Mesh& mesh) const;
  // Whether it holds mesh coordinates (else a logical id).
  bool by_coords() const { return by_coords_; }
  // "logical id 9" / "mesh coordinates (1, 4)".
  std::string to_string() const;

 private:
  DeviceId() = default;
  int logical_ = -1;
  std::vector<int> coords_;
  bool by_coords_ = false;
};

}  // namespace meshsim
