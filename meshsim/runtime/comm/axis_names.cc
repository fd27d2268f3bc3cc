#include "meshsim/runtime/comm/axis_names.h"

namespace meshsim {

namespace {

// Axis names are short: a loop over their bytes is cheaper than the call
// to memcmp that operator== makes (a group lookup per collective compares
// them; memcmp was 3 % of an 8-byte call).
bool same_name(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

bool AxisNames::equals(std::span<const std::string> other) const {
  const auto mine = names();
  if (mine.size() != other.size()) return false;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (!same_name(mine[i], other[i])) return false;
  }
  return true;
}

std::string AxisNames::to_string() const {
  const auto mine = names();
  std::string out;
  for (size_t i = 0; i < mine.size(); ++i) {
    if (i > 0) out += ", ";
    out += '\'';
    out += mine[i];
    out += '\'';
  }
  return mine.size() == 1 ? out : "(" + out + ")";
}

}  // namespace meshsim
