#include "meshsim/runtime/comm/internal/collective_call.h"

#include <cstring>
#include <string_view>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

namespace {

bool same_text(const char* a, const char* b) { return a == b || std::strcmp(a, b) == 0; }

// A plain loop: shapes are short, and memcmp's call costs more than they do.
bool same_values(std::span<const int64_t> a, std::span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace

void CollectiveCall::throw_too_many_params(const char* name) const {
  throw RuntimeUsageError(std::string(op) + ": more than " + std::to_string(kMaxParams) +
                          " collective parameters (adding '" + name + "')");
}

bool CollectiveCall::same_as(const CollectiveCall& other) const {
  if (!same_text(op, other.op) || dtype != other.dtype || has_operand != other.has_operand ||
      num_params != other.num_params ||
      !same_text(list_name, other.list_name) || !same_text(algorithm, other.algorithm) ||
      !same_values(shape, other.shape) || !same_values(list, other.list)) {
    return false;
  }
  for (int i = 0; i < num_params; ++i) {
    if (!same_text(params[i].name, other.params[i].name) ||
        params[i].value != other.params[i].value) {
      return false;
    }
  }
  return true;
}

std::string CollectiveCall::describe() const {
  std::string out = std::string(op) + "(";
  if (has_operand) out += std::string(dtype_name(dtype)) + shape_to_string(shape);
  // ", " before every argument but a first one.
  const auto next = [&] {
    if (out.back() != '(') out += ", ";
  };
  for (int i = 0; i < num_params; ++i) {
    const Param& p = params[i];
    next();
    out += std::string(p.name) + "=" +
           (p.is_bool ? (p.value != 0 ? "true" : "false") : std::to_string(p.value));
  }
  if (!list.empty() || *list_name != '\0') {
    next();
    out += std::string(list_name) + "=[";
    for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + std::to_string(list[i]);
    out += "]";
  }
  // The default is left out, so messages of ordinary calls stay short.
  if (*algorithm != '\0' && std::strcmp(algorithm, "direct") != 0) {
    next();
    out += "algorithm=" + std::string(algorithm);
  }
  return out + ")";
}

}  // namespace meshsim
