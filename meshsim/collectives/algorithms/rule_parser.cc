#include "meshsim/collectives/algorithms/internal/rule_parser.h"

#include <charconv>
#include <string>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

// The rules and the part come from a user (MESHSIM_ALGO): quoted, so that an
// unprintable byte is escaped and a long value is cut.
[[noreturn]] void bad(std::string_view spec, std::string_view part, const std::string& why) {
  throw InvalidArgumentError("algorithm rules " + quote_text(spec, 256) + ": " +
                             quote_text(part) + " " + why);
}

// "64K" -> 65536; "" -> 0 (no bound).
size_t parse_bytes(std::string_view spec, std::string_view part, std::string_view text) {
  if (text.empty()) return 0;
  size_t scale = 1;
  switch (text.back()) {
    case 'K': case 'k': scale = size_t{1} << 10; break;
    case 'M': case 'm': scale = size_t{1} << 20; break;
    case 'G': case 'g': scale = size_t{1} << 30; break;
    default: break;
  }
  if (scale != 1) text.remove_suffix(1);
  size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    bad(spec, part, "has a byte bound that is not a number (K, M, G suffixes allowed)");
  }
  if (value > SIZE_MAX / scale) bad(spec, part, "has a byte bound that overflows");
  return value * scale;
}

}  // namespace

bool is_algorithm_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxAlgorithmName) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

std::array<std::vector<ParsedRule>, RegistryTables::kCollectives> parse_rules(
    std::string_view spec) {
  std::array<std::vector<ParsedRule>, RegistryTables::kCollectives> out;
  for (std::string_view group : split(spec, ';')) {
    if (group.empty()) continue;  // "a;;b" and a trailing ';' are harmless
    const size_t colon = group.find(':');
    if (colon == std::string_view::npos) bad(spec, group, "names no algorithm (COLLECTIVE:NAME)");
    const std::string_view collective_text = group.substr(0, colon);
    Collective collective;
    if (!collective_from_name(collective_text, collective)) {
      bad(spec, collective_text, "is not a collective with algorithms");
    }
    for (std::string_view rule_text : split(group.substr(colon + 1), ',')) {
      if (rule_text.size() > kMaxRuleText) {
        bad(spec, rule_text, "is longer than " + std::to_string(kMaxRuleText) + " bytes");
      }
      const size_t range_colon = rule_text.find(':');
      const std::string_view name = rule_text.substr(0, range_colon);
      if (!is_algorithm_name(name)) {
        bad(spec, rule_text,
            "does not start with an algorithm name (1 to " + std::to_string(kMaxAlgorithmName) +
                " characters of [a-z0-9_-])");
      }
      ParsedRule parsed;
      parsed.rule.collective = collective;
      parsed.rule.algorithm = std::string(name);
      if (range_colon != std::string_view::npos) {
        const std::string_view range = rule_text.substr(range_colon + 1);
        const size_t dash = range.find('-');
        if (dash == std::string_view::npos) bad(spec, rule_text, "has a range without '-' (MIN-MAX)");
        parsed.rule.min_bytes = parse_bytes(spec, rule_text, range.substr(0, dash));
        parsed.rule.max_bytes = parse_bytes(spec, rule_text, range.substr(dash + 1));
        if (parsed.rule.max_bytes != 0 && parsed.rule.max_bytes <= parsed.rule.min_bytes) {
          bad(spec, rule_text, "has an empty byte range");
        }
      }
      parsed.text = "MESHSIM_ALGO: " + std::string(collective_text) + ":" + std::string(rule_text);
      out[static_cast<size_t>(collective)].push_back(std::move(parsed));
    }
  }
  return out;
}

}  // namespace meshsim
