#include "meshsim/mesh/topology/topology_spec.h"

#include <charconv>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/topology/internal/dimension_group.h"
#include "meshsim/mesh/topology/internal/units.h"

namespace meshsim {
namespace {

std::string_view trim(std::string_view text) {
  const char* space = " \t\r\n";
  size_t first = text.find_first_not_of(space);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(space) - first + 1);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  for (;;) {
    size_t at = text.find(separator);
    out.push_back(trim(text.substr(0, at)));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

std::string quoted(std::string_view text) {
  std::string out = "'";  // not "'" + std::string(text): a GCC 12 -Wrestrict false positive
  return out.append(text).append("'");
}

std::vector<int> parse_sizes(std::string_view text, int expected, const std::string& label) {
  std::vector<int> sizes;
  for (std::string_view piece : split(text, 'x')) {
    int size = 0;
    auto [end, ec] = std::from_chars(piece.data(), piece.data() + piece.size(), size);
    if (piece.empty() || ec != std::errc() || end != piece.data() + piece.size()) {
      throw TopologyError(label + ": size: expected an integer, got " + quoted(piece) + " in " +
                          quoted(text));
    }
    if (size < 1) {
      throw TopologyError(label + ": size must be >= 1, got " + std::to_string(size));
    }
    sizes.push_back(size);
  }
  if (static_cast<int>(sizes.size()) != expected) {
    throw TopologyError(label + ": sizes: expected " + std::to_string(expected) +
                        (expected == 1 ? " size" : " sizes joined by 'x'") + ", got " +
                        quoted(text));
  }
  return sizes;
}

DimensionGroup parse_group(std::string_view text, int index) {
  std::vector<std::string_view> parts = split(text, ':');
  std::string label = "dimension group " + std::to_string(index);
  GroupKind kind = parse_group_kind(parts[0], label + ": kind");
  label += " (" + std::string(parts[0]) + ")";
  if (parts.size() < 2 || parts.size() > 3) {
    throw TopologyError(label + ": expected kind[:sizes]:bw=...,lat=..., got " + quoted(text));
  }
  DimensionGroup group{label, kind.kind, kind.dimensions, {}, 0, 0};
  if (parts.size() == 3) group.sizes = parse_sizes(parts[1], kind.dimensions, label);

  bool has_bandwidth = false;
  bool has_latency = false;
  for (std::string_view param : split(parts.back(), ',')) {
    size_t equals = param.find('=');
    std::string_view key = trim(param.substr(0, equals));
    if (equals == std::string_view::npos || (key != "bw" && key != "lat")) {
      throw TopologyError(label + ": expected bw=<bandwidth> or lat=<latency>, got " +
                          quoted(param));
    }
    std::string_view value = trim(param.substr(equals + 1));
    bool& seen = key == "bw" ? has_bandwidth : has_latency;
    if (seen) throw TopologyError(label + ": " + std::string(key) + " is given twice");
    seen = true;
    std::string field = label + ": " + std::string(key);
    if (key == "bw") {
      group.bandwidth = topology_units::parse_bandwidth(value, field);
    } else {
      group.latency = topology_units::parse_latency(value, field);
    }
  }
  if (!has_bandwidth) throw TopologyError(label + ": bw is missing (e.g. bw=50GB/s)");
  if (!has_latency) throw TopologyError(label + ": lat is missing (e.g. lat=500ns)");
  return group;
}

}  // namespace

Topology parse_topology_spec(std::string_view spec, std::optional<int> device_count) {
  try {
    std::vector<DimensionGroup> groups;
    for (std::string_view group : split(spec, ';')) {
      groups.push_back(parse_group(group, static_cast<int>(groups.size())));
    }
    return build_topology(groups, device_count);
  } catch (TopologyError& e) {
    e.add_context("topology spec " + quoted(spec));
    throw;
  }
}

}  // namespace meshsim
