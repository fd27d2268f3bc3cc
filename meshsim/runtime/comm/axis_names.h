#pragma once
// AxisNames: the axis argument of collectives and axis queries — one mesh axis
// name or several (major-to-minor), as JAX's `axis_name`. It only views the
// caller's strings (no allocation for up to kInline names), so it is a
// parameter type: never store one beyond the call that received it.

#include <array>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace meshsim {

class AxisNames {
 public:
  AxisNames(const char* name) : AxisNames(std::string_view(name)) {}  // NOLINT
  AxisNames(const std::string& name) : AxisNames(std::string_view(name)) {}  // NOLINT
  AxisNames(std::string_view name) : size_(1) { inline_[0] = name; }  // NOLINT
  AxisNames(std::initializer_list<std::string_view> names) { assign(names); }  // NOLINT
  AxisNames(const std::vector<std::string>& names) { assign(names); }  // NOLINT
  AxisNames(std::span<const std::string> names) { assign(names); }  // NOLINT
  // Copied, also where moved from (the names are views: up to four, a copy
  // allocates nothing); a moved-from list would keep its count over an
  // emptied heap part.
  AxisNames(const AxisNames&) = default;
  AxisNames& operator=(const AxisNames&) = default;

  std::span<const std::string_view> names() const {
    return heap_.empty() ? std::span<const std::string_view>(inline_.data(), size_)
                         : std::span<const std::string_view>(heap_);
  }
  int size() const { return static_cast<int>(size_); }
  std::vector<std::string> to_vector() const { return {names().begin(), names().end()}; }
  // Inline: every collective's group lookup compares its axes this way.
  bool equals(std::span<const std::string> other) const {
    if (other.size() != size_) return false;
    const std::string_view* mine = heap_.empty() ? inline_.data() : heap_.data();
    for (size_t i = 0; i < size_; ++i) {
      if (!same_name(mine[i], other[i])) return false;
    }
    return true;
  }
  // JAX-like: 'x' for one name, ('x', 'y') for several.
  std::string to_string() const;

 private:
  static constexpr size_t kInline = 4;
  // Axis names are short: a loop over their bytes is cheaper than the call
  // to memcmp that operator== makes (memcmp was 3 % of an 8-byte call).
  static bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return false;
    }
    return true;
  }
  template <class Range>
  void assign(const Range& names) {
    size_ = names.size();
    if (size_ <= kInline) {
      size_t i = 0;
      for (const auto& n : names) inline_[i++] = n;
    } else {
      heap_.assign(names.begin(), names.end());
    }
  }
  std::array<std::string_view, kInline> inline_{};
  std::vector<std::string_view> heap_;
  size_t size_ = 0;
};

}  // namespace meshsim
