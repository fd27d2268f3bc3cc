#include "meshsim/mesh/internal/format.h"

namespace meshsim {

std::string quote_axis(std::string_view name) {
  std::string out = "'";
  return out.append(name).append("'");
}

std::string quote_text(std::string_view text, size_t max_bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  size_t used = 0;  // bytes of `text` shown
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = byte >= 0x20 && byte < 0x7f && c != '\\' && c != '\'';
    if (out.size() - 1 + (plain ? 1 : 4) > max_bytes) break;
    if (plain) {
      out += c;
    } else {
      out.append("\\x").append(1, kHex[byte >> 4]).append(1, kHex[byte & 15]);
    }
    ++used;
  }
  out += "'";
  if (used < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string count_of(int64_t n, std::string_view one, std::string_view many) {
  std::string out = std::to_string(n);
  out += ' ';
  if (n == 1) return out.append(one);
  return many.empty() ? out.append(one).append("s") : out.append(many);
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
