#pragma once
// Text helpers shared by to_string() and error messages (mesh/ and the
// layers above), so that an axis list, a shape or a count reads the same
// everywhere (JAX-like quoting).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace meshsim {

// 'x' (quoted axis name).
std::string quote_axis(std::string_view name);

// Text a user gave (an environment variable's value), quoted for a message:
// bytes outside printable ASCII, and the quote and backslash, as \xNN, and
// cut where the quoted characters would pass `max_bytes`, saying how long the
// text was (so a message stays short whatever the text holds).
std::string quote_text(std::string_view text, size_t max_bytes = 64);

// `n` and the noun that agrees with it: "1 entry", "2 entries" ("device",
// with no plural given: "2 devices").
std::string count_of(int64_t n, std::string_view one, std::string_view many = {});

// Axes as in a JAX PartitionSpec entry: () for none, 'x' for one, ('x', 'y') for several.
std::string format_axes(std::span<const std::string> axes);

// Integers joined between brackets: format_ints(v, "(", ")") gives "(8, 8)".
template <typename Int>
std::string format_ints(std::span<const Int> values, std::string_view open = "[",
                        std::string_view close = "]") {
  std::string out(open);
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(values[i]);
  }
  return out.append(close);
}

}  // namespace meshsim
