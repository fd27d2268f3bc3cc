#include "tools/layout_command.h"

#include "meshsim/mesh/internal/format.h"
#include "meshsim/mesh/sharding.h"
#include "meshsim/mesh/visualize_sharding.h"
#include "tools/cli_parse.h"

namespace meshsim::cli {

LayoutCommand::LayoutCommand(CLI::App& layout) {
  layout.add_option("--mesh", mesh_, "Devices: a count (one axis x) or NAME=SIZE,... major-to-minor")
      ->capture_default_str();
  layout.add_option("--spec", spec_,
                    "PartitionSpec, one entry per dimension: an axis, None, or (a,b) for "
                    "several axes; e.g. 'x,None'")
      ->required();
  layout.add_option("--shape", shape_, "Global shape of a 1-D or 2-D array, e.g. 16,8")
      ->required();
}

LayoutOptions LayoutCommand::options() const {
  return {.mesh = parse_mesh(mesh_), .spec = parse_spec(spec_), .shape = parse_shape(shape_)};
}

void run_layout(const LayoutOptions& options, std::ostream& out) {
  const NamedSharding sharding(options.mesh, options.spec);
  const std::string picture = visualize_sharding(sharding, options.shape);
  out << sharding.to_string() << " of shape " << format_ints<int64_t>(options.shape, "(", ")")
      << ": shards of shape "
      << format_ints<int64_t>(sharding.shard_shape(options.shape), "(", ")") << "\n"
      << picture;
}

}  // namespace meshsim::cli
