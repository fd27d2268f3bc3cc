#include "tools/cli_parse.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <string>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"
#include "meshsim/mesh/topology/topology_json.h"
#include "meshsim/mesh/topology/topology_spec.h"
#include "meshsim/runtime/time/congestion_aware_model.h"
#include "meshsim/runtime/time/congestion_unaware_model.h"

namespace meshsim::cli {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// An axis name as a user may quote it: x, 'x' or "x".
std::string_view unquote(std::string_view name) {
  name = trim(name);
  if (name.size() >= 2 && (name.front() == '\'' || name.front() == '"') &&
      name.back() == name.front()) {
    name = name.substr(1, name.size() - 2);
  }
  return name;
}

}  // namespace

InvalidArgumentError bad_value(std::string_view option, std::string_view value,
                               std::string_view why) {
  return InvalidArgumentError(std::string(option) + " " + quote_text(value) + ": " +
                              std::string(why));
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

// A decimal integer without sign, or nullopt if `text` is not one or exceeds `max`.
std::optional<uint64_t> parse_unsigned(std::string_view text, uint64_t max) {
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  for (char ch : text) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(ch - '0');
    if (value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

Mesh parse_mesh(std::string_view text) {
  constexpr std::string_view kForm =
      "expected a device count or NAME=SIZE entries separated by commas, e.g. --mesh 8 or "
      "--mesh x=4,y=2";
  std::vector<std::pair<std::string, int>> axes;
  if (const auto count = parse_unsigned(text, std::numeric_limits<int>::max())) {
    axes.emplace_back("x", static_cast<int>(*count));
  } else {
    for (std::string_view entry : split(text, ',')) {
      const size_t equals = entry.find('=');
      const auto size =
          equals == std::string_view::npos
              ? std::nullopt
              : parse_unsigned(entry.substr(equals + 1), std::numeric_limits<int>::max());
      if (!size) throw bad_value("--mesh", text, kForm);
      axes.emplace_back(std::string(entry.substr(0, equals)), static_cast<int>(*size));
    }
  }
  try {
    return Mesh::make(std::move(axes));
  } catch (const Error& e) {
    throw bad_value("--mesh", text, e.message());
  }
}

PartitionSpec parse_spec(std::string_view text) {
  constexpr std::string_view kForm =
      "expected entries separated by commas, each an axis name, None, or several axes in "
      "parentheses, e.g. --spec 'x,None' or --spec '(x,y),None'";
  std::string_view body = trim(text);
  for (std::string_view prefix : {"PartitionSpec(", "P("}) {
    if (body.starts_with(prefix) && body.ends_with(")")) {
      body = body.substr(prefix.size(), body.size() - prefix.size() - 1);
      break;
    }
  }
  std::vector<PartitionSpec::AxisList> entries;
  if (trim(body).empty()) return PartitionSpec(std::move(entries));
  // Top-level commas separate entries; commas inside parentheses separate the
  // axes of one entry.
  size_t begin = 0;
  int depth = 0;
  for (size_t i = 0; i <= body.size(); ++i) {
    const char ch = i < body.size() ? body[i] : ',';
    if (ch == '(') ++depth;
    if (ch == ')') --depth;
    if (depth < 0 || depth > 1) throw bad_value("--spec", text, kForm);
    if (ch != ',' || depth != 0) continue;
    std::string_view entry = trim(body.substr(begin, i - begin));
    begin = i + 1;
    PartitionSpec::AxisList axes;
    if (entry.starts_with('(') && entry.ends_with(')')) {
      for (std::string_view name : split(entry.substr(1, entry.size() - 2), ',')) {
        if (!unquote(name).empty()) axes.emplace_back(unquote(name));
      }
    } else if (entry != "None" && entry != "none" && !entry.empty()) {
      const std::string_view name = unquote(entry);
      if (name.empty() || name.find_first_of("()") != std::string_view::npos) {
        throw bad_value("--spec", text, kForm);
      }
      axes.emplace_back(name);
    }
    entries.push_back(std::move(axes));
  }
  if (depth != 0) throw bad_value("--spec", text, kForm);
  return PartitionSpec(std::move(entries));
}

std::vector<int64_t> parse_shape(std::string_view text) {
  constexpr std::string_view kForm =
      "expected dimensions separated by commas, e.g. --shape 16,8 (empty for a scalar)";
  std::vector<int64_t> shape;
  if (trim(text).empty()) return shape;
  for (std::string_view dim : split(text, ',')) {
    const auto value = parse_unsigned(trim(dim), std::numeric_limits<int64_t>::max());
    if (!value) throw bad_value("--shape", text, kForm);
    shape.push_back(static_cast<int64_t>(*value));
  }
  return shape;
}

std::shared_ptr<const VirtualTime> parse_topology_option(std::string_view text, const Mesh& mesh,
                                                         std::string_view network) {
  const std::string spec(text);
  try {
    std::error_code ec;
    // A file when one is there, or when the text names a JSON file (so a
    // missing one says so rather than failing as a spec; a spec has '/' in
    // its bandwidths).
    const bool file = std::filesystem::exists(spec, ec) || spec.ends_with(".json");
    const Topology topology = file ? read_topology_file(spec, mesh.size())
                                   : parse_topology_spec(spec, mesh.size());
    auto time = std::make_shared<VirtualTime>();
    if (network == "congestion-aware") {
      time->network = std::make_shared<CongestionAwareModel>(topology);
    } else {
      time->network = std::make_shared<CongestionUnawareModel>(topology);
    }
    return time;
  } catch (const Error& e) {
    throw bad_value("--topology", spec, e.message());
  }
}

CLI::Option* add_network_option(CLI::App& app, std::string& network) {
  return app.add_option("--network", network,
                 "The model of --topology: congestion-unaware (per message: hops x latency + "
                 "bytes / bandwidth) or congestion-aware (links are shared: store-and-forward "
                 "FIFO per link, priced after the launch)")
      ->check(CLI::IsMember({"congestion-unaware", "congestion-aware"}))
      ->capture_default_str();
}

void check_output_path(std::string_view option, const std::string& path) {
  if (path.empty()) throw bad_value(option, path, "is empty");
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    throw bad_value(option, path, "its directory does not exist");
  }
  if (std::filesystem::is_directory(path, ec)) throw bad_value(option, path, "is a directory");
  // Probed without side effects: a file that exists is opened for
  // appending (which changes nothing); a new one is created exclusively and
  // removed again. A pipe, a socket or a dangling symlink is not probed
  // (opening a pipe would wait for a reader, or hand it an end of file).
  const auto status = std::filesystem::symlink_status(path, ec);
  const auto kind = status.type();
  if (kind == std::filesystem::file_type::not_found) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) throw bad_value(option, path, "cannot be created");
    ::close(fd);
    ::unlink(path.c_str());
    return;
  }
  const auto target = std::filesystem::status(path, ec).type();
  if (target == std::filesystem::file_type::regular ||
      target == std::filesystem::file_type::character) {
    if (!std::ofstream(path, std::ios::app)) {
      throw bad_value(option, path, "cannot be opened for writing");
    }
  }
}

}  // namespace meshsim::cli
