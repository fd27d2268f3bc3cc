#pragma once
// Shared by the built-in algorithm tests of each collective: the cases (an
// algorithm, a group size, an element count and dtype), per-device inputs
// with distinct values, and what a device's collective record says ran.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "meshsim/meshsim.h"

namespace meshsim::algorithm_cases {

struct Case {
  std::string algorithm;
  int group_size = 1;
  int64_t count = 0;  // elements per block (per member for broadcast)
  DType dtype = DType::kInt32;
};

inline std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return c.algorithm + "_n" + std::to_string(c.group_size) + "_" + std::to_string(c.count) + "x" +
         std::string(dtype_name(c.dtype));
}

// Zero bytes, one element, and an odd byte count (7 uint8: not divisible by
// any group size above 1 except 7).
inline const std::vector<std::pair<int64_t, DType>> kSizes = {
    {0, DType::kInt32}, {1, DType::kInt32}, {7, DType::kUInt8}};
inline const std::vector<int> kGroupSizes = {1, 2, 3, 5, 8};

using Sizes = std::vector<std::pair<int64_t, DType>>;

// Every (algorithm, group size, size) whose group size `allowed` accepts.
template <class Allowed>
std::vector<Case> cases(const std::vector<std::string>& algorithms, const Sizes& sizes,
                        Allowed allowed) {
  std::vector<Case> out;
  for (const auto& algorithm : algorithms) {
    for (int n : kGroupSizes) {
      if (!allowed(algorithm, n)) continue;
      for (const auto& [count, dtype] : sizes) out.push_back({algorithm, n, count, dtype});
    }
  }
  return out;
}
inline std::vector<Case> cases(const std::vector<std::string>& algorithms,
                               const Sizes& sizes = kSizes) {
  return cases(algorithms, sizes, [](const std::string&, int) { return true; });
}

// Device `device`'s input of `count` elements: values distinct across devices
// and elements (up to 8 devices of 7 elements even in uint8).
inline Array input(int device, int64_t count, DType dtype) {
  Array a = Array::empty({count}, DType::kInt64);
  int64_t value = 1 + 31 * device;
  for (int64_t& v : a.mutable_span<int64_t>()) v = value++;
  return a.astype(dtype);
}

// What a device's last collective record says: "collective/algorithm/n".
inline std::string last_record(DeviceContext& ctx) {
  const auto records = ctx.collective_records();
  if (records.empty()) return "(no record)";
  const auto& r = records.back();
  return std::string(r.collective) + "/" + std::string(r.algorithm) + "/" +
         std::to_string(r.group_size);
}

}  // namespace meshsim::algorithm_cases
