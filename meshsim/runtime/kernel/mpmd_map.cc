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

// MeshError unless the meshes agree on the size of every axis name they
// share and no device is in more than RuntimeImpl::kMaxCores of them.
void check_meshes(const std::vector<MpmdProgram>& programs) {
  struct Seen {
    int size;
    size_t program;
  };
  std::map<std::string, Seen, std::less<>> axes;
  std::unordered_map<int, std::vector<size_t>> devices;  // id -> the programs on it
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
      std::vector<size_t>& on = devices[id];
      on.push_back(p);
      if (on.size() > static_cast<size_t>(RuntimeImpl::kMaxCores)) {
        std::string names;
        for (size_t q : on) names += (names.empty() ? "" : ", ") + std::to_string(q);
        throw MeshError("mpmd_map: device " + std::to_string(id) + " is in the meshes of " +
                        std::to_string(on.size()) + " programs (" + names + "); a device runs at most " +
                        std::to_string(RuntimeImpl::kMaxCores) + " functions");
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

  // A device's first program runs on its core 0, the next on core 1, and so
  // on: the launch's mesh holds agent ids (RuntimeImpl::launch_agents).
  RuntimeImpl& impl = RuntimeHooks::impl(runtime);
  KernelPrograms table;
  table.mpmd = true;
  std::vector<int> agents;
  std::vector<int> program_of;  // by launch position
  std::vector<int> owner;       // by launch position: the position of its device's core 0
  std::unordered_map<int, std::pair<int, int>> cores;  // device -> (cores so far, core 0's position)
  bool shared = false;
  for (size_t p = 0; p < programs.size(); ++p) {
    table.programs.push_back({&programs[p].mesh, static_cast<int>(agents.size())});
    for (int id : programs[p].mesh.device_ids()) {
      const int position = static_cast<int>(agents.size());
      auto [it, first] = cores.try_emplace(id, 0, position);
      shared = shared || !first;
      agents.push_back(impl.agent_id(id, it->second.first));
      ++it->second.first;
      owner.push_back(it->second.second);
      program_of.push_back(static_cast<int>(p));
    }
  }
  if (shared) table.shard_owner = std::move(owner);
  const int count = static_cast<int>(agents.size());
  const Mesh launch_mesh(AbstractMesh({{std::string(kMpmdAxis), count}}), std::move(agents));
  impl.launch_agents(
      launch_mesh,
      [&](DeviceContext& ctx) {
        const int program = program_of[ctx.position()];
        run_kernel_program(ctx, spec, table, program,
                           [&](KernelContext& kernel) { programs[program].body(kernel); });
      },
      options);
}

}  // namespace meshsim
