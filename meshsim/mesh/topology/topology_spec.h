#pragma once
// The one-line topology spec, as the CLI takes it (--topology):
//
//   spec     := group (';' group)*            dimension 0 first
//   group    := kind [':' sizes] ':' params
//   kind     := fully_connected | switch | ring | bidirectional_ring
//             | torus2d | torus3d             (2 / 3 bidirectional rings)
//   sizes    := size ('x' size)*              one size per dimension of the kind
//   params   := param (',' param)*            bw and lat, each exactly once
//   param    := 'bw=' bandwidth | 'lat=' latency
//   bandwidth:= number unit, unit in B/s KB/s MB/s GB/s TB/s (x1000 steps)
//                                 or KiB/s MiB/s GiB/s TiB/s (x1024 steps)
//   latency  := number unit, unit in s ms us ns
//
// Bandwidth is in bytes (not bits) per second, of every link of the
// dimension. Spaces around groups, sizes and params are ignored. Examples:
//   ring:bw=50GB/s,lat=500ns                   a ring of all the devices
//   torus2d:4x4:bw=100GB/s,lat=1us             a 4x4 torus (16 nodes)
//   ring:8:bw=400GB/s,lat=100ns;switch:4:bw=50GB/s,lat=2us
//                                              8 per server, 4 servers
//
// One single-dimension group may omit its size: it is the device count
// divided by the product of the other sizes (so `ring:bw=...` on an 8-device
// mesh is a ring of 8).

#include <optional>
#include <string_view>

#include "meshsim/mesh/topology/topology.h"

namespace meshsim {

// The topology `spec` describes. `device_count` (the mesh's size, when bound
// to one) fills an omitted size and must equal the node count. Throws
// TopologyError whose message quotes the spec and names the group, the field
// and the value: unknown kind or parameter, a parameter missing or repeated,
// a malformed size, number or unit, zero / negative / non-finite bandwidth,
// negative latency, an underivable size, a node count other than device_count.
Topology parse_topology_spec(std::string_view spec, std::optional<int> device_count = std::nullopt);

}  // namespace meshsim
