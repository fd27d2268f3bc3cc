#pragma once
// A topology as a JSON document, the shape of ASTRA-sim's network
// description (dimension 0 first):
//
//   {"dimensions": [
//     {"kind": "ring",    "size": 8,      "bandwidth": "400GB/s", "latency": "100ns"},
//     {"kind": "torus2d", "size": [4, 4], "bandwidth": 5e10,      "latency": 1e-6}
//   ]}
//
// kind: as in the one-line spec (topology_spec.h), torus2d / torus3d included.
// size: an integer, or for a torus an array of 2 / 3 integers; it may be
// left out for one single-dimension entry, derived as in the spec.
// bandwidth / latency: a number in bytes per second / seconds, or a string
// with a unit as in the spec ("50GB/s", "500ns").
// Any other key is an error (a misspelt "bandwith" must not go unnoticed),
// and so is a key given twice in one object.

#include <optional>
#include <string>
#include <string_view>

#include "meshsim/mesh/topology/topology.h"

namespace meshsim {

// The topology `json` describes; device_count as in parse_topology_spec.
// Throws TopologyError naming the entry, the field and the value: malformed
// JSON (with the parser's position), a field missing, of the wrong type or
// unknown, and every defect parse_topology_spec reports.
Topology parse_topology_json(std::string_view json, std::optional<int> device_count = std::nullopt);

// parse_topology_json of a file's contents; TopologyError naming the path if
// it cannot be opened, is a directory or holds more than 64 MiB, and every
// message prefixed with the path.
Topology read_topology_file(const std::string& path,
                            std::optional<int> device_count = std::nullopt);

}  // namespace meshsim
