#pragma once
// CollectiveCall: what a group member says it is calling — operation, dtype,
// shape and parameters. Members publish it before they meet; the leader (in a
// small group, every member) compares them, so an SPMD divergence becomes a
// CollectiveMismatchError naming both sides instead of a hang or garbage.

#include <array>
#include <concepts>
#include <cstdint>
#include <span>
#include <string>

#include "meshsim/runtime/array/dtype.h"

namespace meshsim {

struct CollectiveCall {
  struct Param {
    const char* name = "";
    int64_t value = 0;
    bool is_bool = false;  // describe() prints true / false
  };
  static constexpr int kMaxParams = 6;

  CollectiveCall() = default;
  CollectiveCall(const char* op, DType dtype, std::span<const int64_t> shape)
      : op(op), dtype(dtype), shape(shape) {}

  const char* op = "";  // a string literal: compared by content
  DType dtype = DType::kFloat32;
  std::span<const int64_t> shape;  // the caller's; valid while it is in the collective
  // False for a call with no array operand (run_kernel): describe() leaves
  // dtype and shape out.
  bool has_operand = true;
  std::array<Param, kMaxParams> params{};
  int num_params = 0;
  // The algorithm chosen to run it (a registry name; "" where a collective
  // has no algorithms to choose from): members must agree on it.
  const char* algorithm = "";
  // A list parameter (e.g. ppermute's flattened pairs); empty when unused.
  const char* list_name = "";
  std::span<const int64_t> list;

  // Adds a parameter; a bool one prints as true / false. RuntimeUsageError
  // past kMaxParams (an operation that needs more must raise the limit).
  CollectiveCall& param(const char* name, std::integral auto value) {
    if (num_params == kMaxParams) throw_too_many_params(name);
    params[num_params++] = {name, static_cast<int64_t>(value), std::same_as<decltype(value), bool>};
    return *this;
  }
  // Whether two calls are the same: op, dtype, shape, every parameter and the
  // list compared exactly (peers' buffers are read on the strength of it).
  bool same_as(const CollectiveCall& other) const;
  // "all_gather(float32(4, 2), axis=0, tiled=true)": what the mismatch
  // message shows.
  std::string describe() const;

 private:
  [[noreturn]] void throw_too_many_params(const char* name) const;
};

}  // namespace meshsim
