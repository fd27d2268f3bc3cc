#pragma once
// The programs of one kernel launch: mpmd_map's (mesh, function) pairs, or
// run_kernel's single program on the launch's mesh. Internal to runtime/.
//
// The launch's mesh lists the programs' devices one program after another,
// each in its own mesh's position order, so a device's logical id (its
// launch position) is its program's offset plus its position there.

#include <string>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/runtime/kernel/device_id.h"

namespace meshsim {

struct KernelProgram {
  const Mesh* mesh;  // outlives the kernel
  int offset;        // the launch position of its first device

  // The launch position (logical id) of `device`, given by coordinates in
  // this program's mesh or by position there; DeviceId's errors otherwise.
  int launch_position(const DeviceId& device) const { return offset + device.position_in(*mesh); }
};

struct KernelPrograms {
  std::vector<KernelProgram> programs;
  // Whether this is an mpmd_map (then messages name the program).
  bool mpmd = false;

  // "mpmd_map program 1" (empty for run_kernel's one program): what a
  // device's errors are prefixed with.
  std::string label(int program) const {
    return mpmd ? "mpmd_map program " + std::to_string(program) : std::string();
  }
};

}  // namespace meshsim
