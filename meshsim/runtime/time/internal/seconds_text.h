#pragma once
// A time in seconds as messages about virtual time write it: every digit a
// double holds (%.17g), so a time that differs from another shows it.

#include <cstdio>
#include <string>

namespace meshsim {

inline std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", seconds);
  return text;
}

}  // namespace meshsim
