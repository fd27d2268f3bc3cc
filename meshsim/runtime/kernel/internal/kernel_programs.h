#pragma once
// The programs of one kernel launch: mpmd_map's (mesh, function) pairs, or
// run_kernel's single program on the launch's mesh. Internal to runtime/.
//
// The launch's mesh lists the programs' devices one program after another,
// each in its own mesh's position order, so a device's logical id (its
// launch position) is its program's offset plus its position there. When
// programs share a device, each runs on a core of its own (an agent of the
// runtime), and the device's memory is the shard of its first program's
// position.

#include <algorithm>
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
  std::vector<KernelProgram> programs;  // by offset
  // Whether this is an mpmd_map (then messages name the program).
  bool mpmd = false;
  // By launch position, the position whose shard it uses (the first
  // program's on its device); empty when no two programs share a device.
  std::vector<int> shard_owner;
  // Non-zero when the programs' meshes hold agent ids (a kernel launched
  // inside an mpmd_map body on its launch mesh): the runtime's device
  // count, which maps an agent id to its device.
  int agent_stride = 0;

  int owner_of(int position) const {
    return shard_owner.empty() ? position : shard_owner[static_cast<size_t>(position)];
  }
  // The program running at launch position `position`.
  int program_at(int position) const {
    const auto after = std::upper_bound(
        programs.begin(), programs.end(), position,
        [](int p, const KernelProgram& program) { return p < program.offset; });
    return static_cast<int>(after - programs.begin()) - 1;
  }
  // The device, as users name it, at launch position `position`.
  int device_at(int position) const {
    const KernelProgram& program = programs[static_cast<size_t>(program_at(position))];
    const int id = program.mesh->device_at(position - program.offset);
    return agent_stride > 0 ? id % agent_stride : id;
  }

  // "mpmd_map program 1" (empty for run_kernel's one program): what a
  // device's errors are prefixed with.
  std::string label(int program) const {
    return mpmd ? "mpmd_map program " + std::to_string(program) : std::string();
  }
};

}  // namespace meshsim
