#pragma once
// Shape: an array's dims (also used for indices and origins) — a vector of
// int64_t that keeps up to kInline values in the object itself, so copying
// the shape of an array of rank <= 6 allocates nothing. Every collective makes
// its result with its input's shape, and a heap-allocated shape's allocation
// and free cost a tenth of a 1-device 8-byte psum.
//
// It reads like std::vector<int64_t>: iterators are plain pointers (so it is a
// contiguous range and converts to std::span<const int64_t>), and it converts
// from a std::vector<int64_t> and to one. Iterators and references are
// invalidated by any change of size past the inline capacity, and, unlike
// std::vector's, by a move of the Shape (inline values move with the object).

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace meshsim {

class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  // Values kept without a heap block: rank 6 covers nearly every array.
  static constexpr size_t kInline = 6;

  Shape() noexcept = default;
  Shape(std::initializer_list<int64_t> values) { append(values.begin(), values.size()); }
  // `count` copies of `value`, as std::vector(count, value).
  explicit Shape(size_t count, int64_t value = 0) {
    reserve(count);
    std::fill_n(data_, count, value);
    size_ = count;
  }
  template <std::input_iterator It>
  Shape(It first, It last) : Shape() {  // delegating: ~Shape runs if an append throws
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  Shape(std::span<const int64_t> values) { append(values.data(), values.size()); }  // NOLINT
  Shape(const std::vector<int64_t>& values) { append(values.data(), values.size()); }  // NOLINT
  Shape(const Shape& other) {
    if (other.size_ <= kInline) {
      // Every inline slot, whatever the size: a fixed-size copy is a few
      // moves (and a heap block holds at least kInline values too).
      std::memcpy(inline_, other.data_, sizeof(inline_));
      size_ = other.size_;
    } else {
      append(other.data_, other.size_);
    }
  }
  Shape(Shape&& other) noexcept { take(other); }
  Shape& operator=(const Shape& other) {
    if (this != &other) replace(other.data_, other.size_);
    return *this;
  }
  Shape& operator=(Shape&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> values) {
    replace(values.begin(), values.size());
    return *this;
  }
  ~Shape() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }

  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return begin(); }
  const_iterator cend() const { return end(); }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }

  // Unchecked, as std::vector's.
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  // std::out_of_range past the end, as std::vector's.
  int64_t& at(size_t i) {
    check_index(i);
    return data_[i];
  }
  const int64_t& at(size_t i) const {
    check_index(i);
    return data_[i];
  }
  int64_t& front() { return data_[0]; }
  const int64_t& front() const { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  void reserve(size_t count) {
    if (count > capacity_) grow(count);
  }
  void clear() { size_ = 0; }
  void push_back(int64_t value) {
    if (size_ == capacity_) grow(2 * capacity_);
    data_[size_++] = value;
  }
  int64_t& emplace_back(int64_t value) {
    push_back(value);
    return back();
  }
  void pop_back() { --size_; }
  void assign(size_t count, int64_t value) { *this = Shape(count, value); }
  template <std::input_iterator It>
  void assign(It first, It last) {
    *this = Shape(first, last);
  }
  void assign(std::initializer_list<int64_t> values) { *this = values; }
  void swap(Shape& other) noexcept { std::swap(*this, other); }
  friend void swap(Shape& a, Shape& b) noexcept { a.swap(b); }
  void resize(size_t count, int64_t value = 0) {
    reserve(count);
    if (count > size_) std::fill(data_ + size_, data_ + count, value);
    size_ = count;
  }
  // As std::vector's: before `pos`; returns where the first new value is.
  iterator insert(const_iterator pos, int64_t value) { return insert(pos, &value, &value + 1); }
  iterator insert(const_iterator pos, size_t count, int64_t value) {
    const Shape values(count, value);
    return insert(pos, values.begin(), values.end());
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  template <std::input_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    // Through a copy: the values may come from this shape itself.
    const Shape values(first, last);
    const size_t at = static_cast<size_t>(pos - data_);
    reserve(size_ + values.size_);
    std::memmove(data_ + at + values.size_, data_ + at, (size_ - at) * sizeof(int64_t));
    std::copy_n(values.data_, values.size_, data_ + at);
    size_ += values.size_;
    return data_ + at;
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - data_);
    const size_t count = static_cast<size_t>(last - first);
    std::memmove(data_ + at, data_ + at + count, (size_ - at - count) * sizeof(int64_t));
    size_ -= count;
    return data_ + at;
  }

  std::vector<int64_t> to_vector() const { return {begin(), end()}; }
  // Implicit, so code written when Shape was a std::vector<int64_t>
  // (`std::vector<int64_t> dims = a.shape();`) still compiles.
  operator std::vector<int64_t>() const { return to_vector(); }  // NOLINT

  friend bool operator==(const Shape& a, const Shape& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  bool on_heap() const { return data_ != inline_; }
  void check_index(size_t i) const {
    if (i >= size_) {
      throw std::out_of_range("Shape::at: index " + std::to_string(i) + " of a shape of " +
                              std::to_string(size_) + " dims");
    }
  }
  // Appends `count` values from `values` (not from this shape).
  void append(const int64_t* values, size_t count) {
    reserve(size_ + count);
    if (count > 0) std::memcpy(data_ + size_, values, count * sizeof(int64_t));
    size_ += count;
  }
  // Replaces the values with `count` from `values` (not from this shape);
  // reserves first, so a failed allocation leaves this unchanged.
  void replace(const int64_t* values, size_t count) {
    reserve(count);
    size_ = 0;
    append(values, count);
  }
  void grow(size_t count) {
    count = std::max<size_t>(count, kInline);
    auto block = std::make_unique<int64_t[]>(count);  // zeroed, as inline_
    if (size_ > 0) std::memcpy(block.get(), data_, size_ * sizeof(int64_t));
    release();
    data_ = block.release();
    capacity_ = count;
  }
  void release() {
    if (on_heap()) delete[] data_;
    data_ = inline_;
    capacity_ = kInline;
  }
  // Takes `other`'s values, leaving it empty.
  void take(Shape& other) noexcept {
    if (other.on_heap()) {
      data_ = std::exchange(other.data_, other.inline_);
      capacity_ = std::exchange(other.capacity_, kInline);
    } else {
      std::memcpy(inline_, other.inline_, sizeof(inline_));
    }
    size_ = std::exchange(other.size_, 0);
  }

  int64_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  int64_t inline_[kInline]{};  // zeroed, so that copying every slot reads no garbage
};

}  // namespace meshsim
