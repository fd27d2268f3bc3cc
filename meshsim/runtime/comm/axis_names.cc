#include "meshsim/runtime/comm/axis_names.h"

namespace meshsim {

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
