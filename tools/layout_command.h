#pragma once
// `meshsim layout`: which devices hold which block of a 1-D or 2-D array
// under a sharding, as jax.debug.visualize_array_sharding shows it:
//   meshsim layout --mesh x=4,y=2 --spec 'x,None' --shape 16,8

#include <CLI/CLI.hpp>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"

namespace meshsim::cli {

struct LayoutOptions {
  Mesh mesh = Mesh::make({{"x", 8}});
  PartitionSpec spec;
  std::vector<int64_t> shape;
};

// Registers the options on the `layout` subcommand. After CLI11 has parsed
// the command line, options() validates what it read (InvalidArgumentError
// naming the option). The object must outlive the parse: CLI11 writes into it.
class LayoutCommand {
 public:
  explicit LayoutCommand(CLI::App& layout);
  LayoutCommand(const LayoutCommand&) = delete;
  LayoutCommand& operator=(const LayoutCommand&) = delete;

  LayoutOptions options() const;

 private:
  std::string mesh_ = "8";
  std::string spec_;
  std::string shape_;
};

// Writes a line naming the sharding and the shape, each device's shard shape,
// and the picture. Throws SpecError / ShapeError for a sharding that does not
// fit the shape.
void run_layout(const LayoutOptions& options, std::ostream& out);

}  // namespace meshsim::cli
