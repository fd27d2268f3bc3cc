#include "meshsim/mesh/internal/format.h"

namespace meshsim {

std::string quote_axis(std::string_view name) {
  std::string out = "'";
  return out.append(name).append("'");
}

std::string format_axes(std::span<const std::string> axes) {
  if (axes.size() == 1) return quote_axis(axes[0]);
  std::string out = "(";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i > 0) out += ", ";
    out += quote_axis(axes[i]);
  }
  return out + ")";
}

}  // namespace meshsim
