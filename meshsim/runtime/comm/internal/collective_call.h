#pragma once
// CollectiveCall: what a group member says it is calling — operation, dtype,
// shape and parameters. Members publish it before they meet; the leader
// compares all of them, so an SPMD divergence becomes a CollectiveMismatchError
// naming both sides instead of a hang or garbage.

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "meshsim/runtime/array/dtype.h"

namespace meshsim {

struct CollectiveCall {
  struct Param {
    const char* name = "";
    int64_t value = 0;
  };
  static constexpr int kMaxParams = 6;

  CollectiveCall() = default;
  CollectiveCall(const char* op, DType dtype, std::span<const int64_t> shape)
      : op(op), dtype(dtype), shape(shape) {}

  const char* op = "";  // a string literal: compared by content
  DType dtype = DType::kFloat32;
  std::span<const int64_t> shape;  // the caller's; valid while it is in the collective
  std::array<Param, kMaxParams> params{};
  int num_params = 0;
  // A list parameter (e.g. ppermute's flattened pairs); empty when unused.
  const char* list_name = "";
  std::span<const int64_t> list;

  CollectiveCall& param(const char* name, int64_t value) {
    params[num_params++] = {name, value};
    return *this;
  }
  // A 64-bit hash of the whole call (op, dtype, shape, parameters, list):
  // members compare signatures, so the leader reads one cache line per member.
  uint64_t signature() const;
  // "psum(float32(4, 2), tiled=1)": what the mismatch message shows.
  std::string describe() const;
};

}  // namespace meshsim
