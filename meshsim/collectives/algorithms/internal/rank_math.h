#pragma once
// Small integer helpers the built-in algorithms share: rank arithmetic on a
// group of n members and the logarithms their step counts are made of.

#include <cstddef>
#include <cstdint>

namespace meshsim::detail {

// (a mod n) in [0, n), for any a (negative included) and n >= 1.
constexpr int mod(int64_t a, int n) {
  const int64_t m = a % n;
  return static_cast<int>(m < 0 ? m + n : m);
}

// ⌈log2 n⌉ for n >= 1: the rounds of a doubling schedule over n members.
constexpr int ceil_log2(int64_t n) {
  int k = 0;
  while ((int64_t{1} << k) < n) ++k;
  return k;
}

// ⌊log2 n⌋ for n >= 1.
constexpr int floor_log2(int64_t n) {
  int k = 0;
  while ((int64_t{2} << k) <= n) ++k;
  return k;
}

// The largest power of two <= n, for n >= 1.
constexpr int floor_pow2(int n) {
  int p = 1;
  while (p <= n / 2) p *= 2;
  return p;
}

constexpr bool is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

// The lowest set bit of v > 0.
constexpr int lowest_bit(int v) { return v & -v; }

}  // namespace meshsim::detail
