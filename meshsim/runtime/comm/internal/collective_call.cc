#include "meshsim/runtime/comm/internal/collective_call.h"

#include <cstring>
#include <functional>
#include <string_view>

#include "meshsim/runtime/array/array.h"

namespace meshsim {

namespace {

// Word-at-a-time mixing: the signature is computed on every collective call.
struct Hasher {
  uint64_t h = 0x243F6A8885A308D3ull;
  void value(uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  void str(const char* s) { value(std::hash<std::string_view>{}(s)); }
};

}  // namespace

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
  h.value(list.size());
  for (int64_t v : list) h.value(static_cast<uint64_t>(v));
  return h.h;
}

std::string CollectiveCall::describe() const {
  std::string out = std::string(op) + "(" + std::string(dtype_name(dtype)) + shape_to_string(shape);
  for (int i = 0; i < num_params; ++i) {
    out += ", " + std::string(params[i].name) + "=" + std::to_string(params[i].value);
  }
  if (!list.empty() || *list_name != '\0') {
    out += ", " + std::string(list_name) + "=[";
    for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + std::to_string(list[i]);
    out += "]";
  }
  return out + ")";
}

}  // namespace meshsim
