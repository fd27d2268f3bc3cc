#include "meshsim/runtime/kernel/mpmd_map.h"

#include <map>
#include <string>
#include <unordered_map>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"
#include "meshsim/runtime/kernel/internal/kernel_programs.h"
#include "meshsim/runtime/kernel/internal/kernel_run.h"

namespace meshsim {
namespace {

std::string program_name(size_t index) { return "program " + std::to_string(index); }

// MeshError unless the meshes share no device and agree on the size of
// every axis name they share.
void check_meshes(const std::vector<MpmdProgram>& programs) {
  struct Seen {
    int size;
    size_t program;
  };
  std::map<std::string, Seen, std::less<>> axes;
  std::unordered_map<int, size_t> devices;
  for (size_t p = 0; p < programs.size(); ++p) {
    const AbstractMesh& shape = programs[p].mesh.abstract_mesh();
    for (size_t a = 0; a < shape.axis_names().size(); ++a) {
      const std::string& name = shape.axis_names()[a];
      const int size = shape.axis_sizes()[a];
      const auto [it, fresh] = axes.try_emplace(name, Seen{size, p});
      if (!fresh && it->second.size != size) {
        throw MeshError("mpmd_map: axis '" + name + "' has size " + std::to_string(it->second.size) +
                        " in " + program_name(it->second.program) + "'s mesh " +
                        programs[it->second.program].mesh.to_string() + " but " +
                        std::to_string(size) + " in " + program_name(p) + "'s mesh " +
                        programs[p].mesh.to_string() +
                        "; an axis name the meshes share must have one size");
      }
    }
    for (int id : programs[p].mesh.device_ids()) {
      const auto [it, fresh] = devices.try_emplace(id, p);
      if (!fresh) {
        throw MeshError("mpmd_map: device " + std::to_string(id) + " is in " +
                        program_name(it->second) + "'s mesh and in " + program_name(p) +
                        "'s; the programs' meshes must not share a device (several functions on "
                        "one device are not supported yet)");
      }
    }
  }
}

}  // namespace

void mpmd_map(Runtime& runtime, const std::vector<MpmdProgram>& programs, const KernelSpec& spec,
              const LaunchOptions& options) {
  if (programs.empty()) {
    throw InvalidArgumentError("mpmd_map of kernel '" + spec.name() +
                               "': at least one (mesh, function) program is required");
  }
  for (size_t p = 0; p < programs.size(); ++p) {
    if (!programs[p].body) {
      throw InvalidArgumentError("mpmd_map of kernel '" + spec.name() + "': " + program_name(p) +
                                 " on " + programs[p].mesh.to_string() + " has an empty function");
    }
  }
  check_meshes(programs);
  for (size_t p = 0; p < programs.size(); ++p) {
    try {
      RuntimeHooks::impl(runtime).check_device_ids(programs[p].mesh);
    } catch (Error& e) {
      e.add_context("mpmd_map of kernel '" + spec.name() + "': " + program_name(p));
      throw;
    }
  }

  KernelPrograms table;
  table.mpmd = true;
  std::vector<int> launch_devices;
  std::vector<int> program_of;  // by launch position
  for (size_t p = 0; p < programs.size(); ++p) {
    table.programs.push_back({&programs[p].mesh, static_cast<int>(launch_devices.size())});
    const std::vector<int>& ids = programs[p].mesh.device_ids();
    launch_devices.insert(launch_devices.end(), ids.begin(), ids.end());
    program_of.insert(program_of.end(), ids.size(), static_cast<int>(p));
  }
  const int count = static_cast<int>(launch_devices.size());
  const Mesh launch_mesh(AbstractMesh({{std::string(kMpmdAxis), count}}), std::move(launch_devices));
  runtime.launch(
      launch_mesh,
      [&](DeviceContext& ctx) {
        const int program = program_of[ctx.position()];
        run_kernel_program(ctx, spec, table, program,
                           [&](KernelContext& kernel) { programs[program].body(kernel); });
      },
      options);
}

}  // namespace meshsim
