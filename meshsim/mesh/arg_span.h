#pragma once
// ArgSpan<T>: the type of a list parameter of the public API. It views the
// caller's elements like std::span<const T> and also accepts what users write
// at a call site: a braced list (`{P{"x"}, P{}}`, `{{0, 1}, {1, 0}}`), a
// std::vector, a std::array or a C array. It never owns: a braced list lives
// until the end of the full expression, which outlasts the call, so it is a
// parameter type only — never store one.

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <vector>

namespace meshsim {

template <class T>
class ArgSpan {
 public:
  ArgSpan() = default;
  ArgSpan(std::initializer_list<T> list) : span_(list.begin(), list.size()) {}  // NOLINT
  ArgSpan(std::span<const T> span) : span_(span) {}                            // NOLINT
  ArgSpan(std::span<T> span) : span_(span) {}                                  // NOLINT
  ArgSpan(const std::vector<T>& vector) : span_(vector) {}                     // NOLINT
  template <size_t N>
  ArgSpan(const std::array<T, N>& array) : span_(array) {}  // NOLINT
  template <size_t N>
  ArgSpan(const T (&array)[N]) : span_(array) {}  // NOLINT

  operator std::span<const T>() const { return span_; }  // NOLINT
  std::span<const T> span() const { return span_; }
  size_t size() const { return span_.size(); }
  bool empty() const { return span_.empty(); }
  const T& operator[](size_t i) const { return span_[i]; }
  const T* begin() const { return span_.data(); }
  const T* end() const { return span_.data() + span_.size(); }
  const T* data() const { return span_.data(); }

 private:
  std::span<const T> span_;
};

}  // namespace meshsim
