#include "meshsim/runtime/comm/internal/collective_call.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

namespace {

// Word-at-a-time mixing: the signature is computed on every collective call.
struct Hasher {
  uint64_t h = 0x243F6A8885A308D3ull;
  void value(uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  // FNV-1a inline: the strings are short names ("psum", "direct").
  void str(const char* s) {
    uint64_t f = 0xcbf29ce484222325ull;
    for (; *s != '\0'; ++s) f = (f ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
    value(f);
  }
};

bool same_text(const char* a, const char* b) { return a == b || std::strcmp(a, b) == 0; }

}  // namespace

void CollectiveCall::add_param(const Param& p) {
  if (num_params == kMaxParams) {
    throw RuntimeUsageError(std::string(op) + ": more than " + std::to_string(kMaxParams) +
                            " collective parameters (adding '" + p.name + "')");
  }
  params[num_params++] = p;
}

bool CollectiveCall::same_as(const CollectiveCall& other) const {
  if (!same_text(op, other.op) || dtype != other.dtype || num_params != other.num_params ||
      !same_text(list_name, other.list_name) || !same_text(algorithm, other.algorithm) || !std::ranges::equal(shape, other.shape) ||
      !std::ranges::equal(list, other.list)) {
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

uint64_t CollectiveCall::signature() const {
  Hasher h;
  h.str(op);
  h.value(static_cast<uint64_t>(dtype));
  h.value(shape.size());
  for (int64_t d : shape) h.value(static_cast<uint64_t>(d));
  for (int i = 0; i < num_params; ++i) {
    h.str(params[i].name);
    h.value(static_cast<uint64_t>(params[i].value));
  }
  h.str(list_name);
  h.str(algorithm);
  h.value(list.size());
  for (int64_t v : list) h.value(static_cast<uint64_t>(v));
  return h.h;
}

std::string CollectiveCall::describe() const {
  std::string out = std::string(op) + "(" + std::string(dtype_name(dtype)) + shape_to_string(shape);
  for (int i = 0; i < num_params; ++i) {
    const Param& p = params[i];
    out += ", " + std::string(p.name) + "=" +
           (p.is_bool ? (p.value != 0 ? "true" : "false") : std::to_string(p.value));
  }
  if (!list.empty() || *list_name != '\0') {
    out += ", " + std::string(list_name) + "=[";
    for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + std::to_string(list[i]);
    out += "]";
  }
  // The default is left out, so messages of ordinary calls stay short.
  if (*algorithm != '\0' && std::strcmp(algorithm, "direct") != 0) {
    out += ", algorithm=" + std::string(algorithm);
  }
  return out + ")";
}

}  // namespace meshsim
