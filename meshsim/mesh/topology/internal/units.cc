#include "meshsim/mesh/topology/internal/units.h"

#include <array>
#include <charconv>
#include <cmath>
#include <system_error>

#include "meshsim/mesh/error.h"

namespace meshsim::topology_units {
namespace {

struct Unit {
  std::string_view name;
  double factor;  // bandwidth: multiplier to bytes/s; latency: divisor to seconds
};

// format_* spells a value in the unit that gives the shortest exact text.
constexpr std::array<Unit, 9> kBandwidthUnits{{
    {"TB/s", 1e12},
    {"TiB/s", 1099511627776.0},
    {"GB/s", 1e9},
    {"GiB/s", 1073741824.0},
    {"MB/s", 1e6},
    {"MiB/s", 1048576.0},
    {"KB/s", 1e3},
    {"KiB/s", 1024.0},
    {"B/s", 1.0},
}};
// Dividing by an exact power of ten (not multiplying by 1e-9, which is not
// exact) makes "500ns" the same double as 5e-7.
constexpr std::array<Unit, 4> kLatencyUnits{{
    {"s", 1.0},
    {"ms", 1e3},
    {"us", 1e6},
    {"ns", 1e9},
}};

std::string quoted(std::string_view text) {
  std::string out = "'";  // not "'" + std::string(text): a GCC 12 -Wrestrict false positive
  return out.append(text).append("'");
}

template <size_t N>
std::string unit_list(const std::array<Unit, N>& units) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += units[i].name;
  }
  return out;
}

// The number at the start of `text` and the unit after it.
std::pair<double, std::string_view> split(std::string_view text, std::string_view field,
                                          std::string_view expected) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::invalid_argument) {
    throw TopologyError(std::string(field) + ": expected a number followed by a unit (" +
                        std::string(expected) + "), got " + quoted(text));
  }
  if (ec == std::errc::result_out_of_range) {
    throw TopologyError(std::string(field) + ": number out of range in " + quoted(text));
  }
  return {value, text.substr(static_cast<size_t>(end - text.data()))};
}

template <size_t N>
const Unit& find_unit(const std::array<Unit, N>& units, std::string_view unit,
                      std::string_view text, std::string_view field) {
  for (const Unit& u : units) {
    if (u.name == unit) return u;
  }
  std::string what = unit.empty() ? "missing unit" : "unknown unit " + quoted(unit);
  throw TopologyError(std::string(field) + ": " + what + " in " + quoted(text) + " (expected " +
                      unit_list(units) + ")");
}

std::string shortest(double value) {
  std::array<char, 64> buffer;
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), end);
}

}  // namespace

double parse_bandwidth(std::string_view text, std::string_view field) {
  const std::string expected = unit_list(kBandwidthUnits);
  auto [number, unit_text] = split(text, field, expected);
  const Unit& unit = find_unit(kBandwidthUnits, unit_text, text, field);
  double value = number * unit.factor;
  if (!std::isfinite(value) || value <= 0) {
    throw TopologyError(std::string(field) + ": bandwidth must be a finite number > 0, got " +
                        quoted(text));
  }
  return value;
}

double parse_latency(std::string_view text, std::string_view field) {
  const std::string expected = unit_list(kLatencyUnits);
  auto [number, unit_text] = split(text, field, expected);
  const Unit& unit = find_unit(kLatencyUnits, unit_text, text, field);
  double value = number / unit.factor;
  if (!std::isfinite(value) || value < 0) {
    throw TopologyError(std::string(field) + ": latency must be a finite number >= 0, got " +
                        quoted(text));
  }
  return value;
}

std::string format_bandwidth(double bytes_per_second) {
  std::string best = shortest(bytes_per_second) + "B/s";
  for (const Unit& unit : kBandwidthUnits) {
    double number = bytes_per_second / unit.factor;
    std::string text = shortest(number) + std::string(unit.name);
    if (number >= 1 && number * unit.factor == bytes_per_second && text.size() < best.size()) {
      best = std::move(text);
    }
  }
  return best;
}

std::string format_latency(double seconds) {
  std::string best = shortest(seconds) + "s";
  for (const Unit& unit : kLatencyUnits) {
    double number = seconds * unit.factor;
    std::string text = shortest(number) + std::string(unit.name);
    if (number >= 1 && number / unit.factor == seconds && text.size() < best.size()) {
      best = std::move(text);
    }
  }
  return best;
}

}  // namespace meshsim::topology_units
