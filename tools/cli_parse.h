#pragma once
// Command-line values shared by the meshsim subcommands: the words of a bad
// value, splitting, numbers, meshes, partition specs and shapes. Every parser
// throws InvalidArgumentError naming the option, the value and the expected
// form.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/mesh.h"
#include "meshsim/mesh/partition_spec.h"
#include "meshsim/runtime/time/virtual_time.h"

namespace meshsim::cli {

// "--option 'value': why", the value quoted by quote_text (bytes outside
// printable ASCII escaped, a long value cut).
InvalidArgumentError bad_value(std::string_view option, std::string_view value,
                               std::string_view why);
// Every piece between separators, empty ones included ("a,,b" has three).
std::vector<std::string_view> split(std::string_view text, char separator);
// A decimal integer without sign, or nullopt if `text` is not one or exceeds `max`.
std::optional<uint64_t> parse_unsigned(std::string_view text, uint64_t max);

// "8": one axis "x" of 8 devices; "x=4,y=2": named axes, major-to-minor.
Mesh parse_mesh(std::string_view text);
// JAX-like: "x,None", "(x,y),None", "'x', None" or "P('x', None)"; "" is P().
PartitionSpec parse_spec(std::string_view text);
// "16,8"; "" is a scalar's shape.
std::vector<int64_t> parse_shape(std::string_view text);
// A file an option will write: not empty, its directory must exist, the
// path must not be a directory itself, and it must open for writing
// (checked before the work, not after it).
void check_output_path(std::string_view option, const std::string& path);
// --topology: a file (JSON, topology_json.h) when `text` names one, else the
// one-line spec (topology_spec.h), with mesh.size() nodes; virtual time on a
// model of it (`network`, --network: "congestion-unaware" or
// "congestion-aware"), mesh position p on node p.
std::shared_ptr<const VirtualTime> parse_topology_option(std::string_view text, const Mesh& mesh,
                                                         std::string_view network);
// Adds --network (the model of --topology) to `app`, stored in `network`
// (its default is the option's default); returns the option.
CLI::Option* add_network_option(CLI::App& app, std::string& network);

}  // namespace meshsim::cli
