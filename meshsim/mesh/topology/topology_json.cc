#include "meshsim/mesh/topology/topology_json.h"

#include <array>
#include <climits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"
#include "meshsim/mesh/topology/internal/dimension_group.h"
#include "meshsim/mesh/topology/internal/units.h"

namespace meshsim {
namespace {

using nlohmann::json;

// Whether `value` holds arrays or objects at most `levels` deep (recursing
// no deeper than that).
bool nests_at_most(const json& value, int levels) {
  if (!value.is_structured()) return true;
  if (levels == 0) return false;
  for (const json& element : value) {
    if (!nests_at_most(element, levels - 1)) return false;
  }
  return true;
}

// `text` cut to `max` characters, saying how long it was.
std::string cut(std::string text, size_t max) {
  if (text.size() > max) {
    text = text.substr(0, max) + "... (" + std::to_string(text.size()) + " characters)";
  }
  return text;
}

// `value` as a message shows it: as JSON, cut to 64 characters, when it
// nests at most 2 deep; else an array or object by its size only (dumping a
// deeply nested one recursed as deep as it nests, and overflowed the stack).
std::string shown(const json& value) {
  if (!nests_at_most(value, 2)) {
    return value.is_array() ? "an array of " + count_of(value.size(), "element")
                            : "an object of " + count_of(value.size(), "key");
  }
  return cut(value.dump(), 64);
}

const json& require(const json& entry, const char* key, const std::string& label) {
  auto it = entry.find(key);
  if (it == entry.end()) throw TopologyError(label + ": \"" + key + "\" is missing");
  return *it;
}

int parse_size(const json& value, const std::string& field) {
  if (!value.is_number_integer()) {
    throw TopologyError(field + ": expected an integer, got " + shown(value));
  }
  int64_t size = value.get<int64_t>();
  if (size < 1 || size > INT_MAX) {
    throw TopologyError(field + ": size must be in [1, " + std::to_string(INT_MAX) + "], got " +
                        shown(value));
  }
  return static_cast<int>(size);
}

std::vector<int> parse_sizes(const json& value, int expected, const std::string& label) {
  const std::string field = label + ": \"size\"";
  if (expected == 1) return {parse_size(value, field)};
  if (!value.is_array() || static_cast<int>(value.size()) != expected) {
    throw TopologyError(field + ": expected an array of " + std::to_string(expected) +
                        " integers, got " + shown(value));
  }
  std::vector<int> sizes;
  for (const json& size : value) sizes.push_back(parse_size(size, field));
  return sizes;
}

// A number in base units, or a string with a unit parsed by `parse`.
template <typename Parse>
double parse_quantity(const json& value, const std::string& field, Parse parse) {
  if (value.is_string()) return parse(value.get<std::string>(), field);
  if (!value.is_number()) {
    throw TopologyError(field + ": expected a number or a string with a unit, got " + shown(value));
  }
  // Range checks (> 0, >= 0, finite) are the Topology constructor's.
  return value.get<double>();
}

DimensionGroup parse_entry(const json& entry, int index) {
  std::string label = "dimension group " + std::to_string(index);
  if (!entry.is_object()) throw TopologyError(label + ": expected an object, got " + shown(entry));
  for (const auto& [key, value] : entry.items()) {
    if (key != "kind" && key != "size" && key != "bandwidth" && key != "latency") {
      throw TopologyError(label + ": unknown field \"" + key +
                          "\" (expected kind, size, bandwidth, latency)");
    }
  }
  const json& kind_value = require(entry, "kind", label);
  if (!kind_value.is_string()) {
    throw TopologyError(label + ": \"kind\": expected a string, got " + shown(kind_value));
  }
  const std::string kind_name = kind_value.get<std::string>();
  GroupKind kind = parse_group_kind(kind_name, label + ": \"kind\"");
  label += " (" + kind_name + ")";
  DimensionGroup group{label, kind.kind, kind.dimensions, {}, 0, 0};
  if (auto size = entry.find("size"); size != entry.end()) {
    group.sizes = parse_sizes(*size, kind.dimensions, label);
  }
  group.bandwidth = parse_quantity(require(entry, "bandwidth", label), label + ": \"bandwidth\"",
                                   topology_units::parse_bandwidth);
  group.latency = parse_quantity(require(entry, "latency", label), label + ": \"latency\"",
                                 topology_units::parse_latency);
  return group;
}

Topology parse_document(std::string_view text, std::optional<int> device_count) {
  json document;
  // The keys of each object being parsed, innermost last: a key given twice
  // is an error, not a silent last-one-wins.
  std::vector<std::set<std::string, std::less<>>> keys;
  const json::parser_callback_t no_duplicate_keys = [&](int, json::parse_event_t event,
                                                        json& parsed) {
    if (event == json::parse_event_t::object_start) keys.emplace_back();
    if (event == json::parse_event_t::object_end) keys.pop_back();
    if (event == json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second) {
      throw TopologyError("the key \"" + parsed.get<std::string>() + "\" is given twice in one object");
    }
    return true;
  };
  try {
    document = json::parse(text, no_duplicate_keys);
  } catch (const json::exception& e) {  // a syntax error, or a number out of range (5e999)
    // The parser's message quotes the text it stopped at, however long.
    throw TopologyError("malformed JSON: " + cut(e.what(), 200));
  }
  if (!document.is_object()) {
    throw TopologyError("expected an object {\"dimensions\": [...]}, got " + shown(document));
  }
  for (const auto& [key, value] : document.items()) {
    if (key != "dimensions") {
      throw TopologyError("unknown field \"" + key + "\" (expected \"dimensions\")");
    }
  }
  auto dimensions = document.find("dimensions");
  if (dimensions == document.end()) throw TopologyError("\"dimensions\" is missing");
  if (!dimensions->is_array() || dimensions->empty()) {
    throw TopologyError("\"dimensions\": expected a non-empty array, got " + shown(*dimensions));
  }
  std::vector<DimensionGroup> groups;
  for (const json& entry : *dimensions) {
    groups.push_back(parse_entry(entry, static_cast<int>(groups.size())));
  }
  return build_topology(groups, device_count);
}

}  // namespace

Topology parse_topology_json(std::string_view json_text, std::optional<int> device_count) {
  try {
    return parse_document(json_text, device_count);
  } catch (TopologyError& e) {
    e.add_context("topology JSON");
    throw;
  }
}

Topology read_topology_file(const std::string& path, std::optional<int> device_count) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw TopologyError("topology file '" + path + "': is a directory");
  }
  // Opening a named pipe waits for a writer, maybe forever.
  if (std::filesystem::is_fifo(path, error) || std::filesystem::is_socket(path, error)) {
    throw TopologyError("topology file '" + path + "': is a named pipe or a socket, not a file");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw TopologyError("topology file '" + path + "': cannot be opened");
  // Read in bounded pieces: /dev/zero or a pipe must not fill the memory.
  constexpr size_t kMaxBytes = size_t{64} << 20;
  std::string contents;  // an empty file reads as "", which is malformed JSON
  std::array<char, 1 << 16> piece;
  while (file.read(piece.data(), piece.size()) || file.gcount() > 0) {
    contents.append(piece.data(), static_cast<size_t>(file.gcount()));
    if (contents.size() > kMaxBytes) {
      throw TopologyError("topology file '" + path + "': longer than " +
                          std::to_string(kMaxBytes >> 20) +
                          " MiB (a topology description takes a few kilobytes)");
    }
  }
  try {
    return parse_document(contents, device_count);
  } catch (TopologyError& e) {
    e.add_context("topology file '" + path + "'");
    throw;
  }
}

}  // namespace meshsim
