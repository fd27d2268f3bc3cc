#pragma once
// Array: the dtype-erased, row-major N-d array that every shard, collective
// input and collective output is.
//
// Storage is 64-byte aligned and shared between copies, so copying an Array
// (into a rendezvous slot, a result vector, a lambda capture) costs a shape
// copy and a reference count, never the data. Every mutable accessor copies
// the storage first if another Array shares it (copy-on-write), so a copy
// never sees writes made through another copy. The consequence for callers:
// a pointer or span obtained from a mutable accessor is only safe to write
// through until this Array is next copied.
//
// Thread safety: like std::shared_ptr. Distinct Array objects may be used from
// different threads even if they share storage (reads anywhere, and a write
// always goes to storage no other Array sees). One Array object must not be
// mutated while another thread reads or copies it.
//
// Allocator settings (process-wide, by necessity). Storage comes from oneTBB's
// scalable allocator (tbbmalloc). On the first Array allocation meshsim sets
// two of its modes: TBBMALLOC_USE_HUGE_PAGES = 1 (new large mappings use the
// system's reserved huge pages if it has any, else are advised as transparent
// huge pages) and TBBMALLOC_SET_HUGE_SIZE_THRESHOLD = 1 MiB (freed blocks of
// 1 MiB and up stay cached in tbbmalloc instead of being returned to the OS).
// They cannot be per runtime: tbbmalloc has one set of modes per process, and
// Arrays belong to no runtime (they are made by host code before and after
// launches and cross runtimes). So they apply to everything in the process that
// allocates through tbbmalloc: oneTBB's own allocators,
// tbb::scalable_allocator, and all of malloc if the host preloads
// tbbmalloc_proxy. What changes for such a host: big blocks may be backed by
// 2 MiB pages (more memory per sparse touch, fewer faults), and freed multi-MiB
// blocks keep holding memory until
// scalable_allocation_command(TBBMALLOC_CLEAN_ALL_BUFFERS, nullptr). A host
// that set TBB_MALLOC_USE_HUGE_PAGES or TBB_MALLOC_SET_HUGE_OBJECT_THRESHOLD in
// the environment keeps its choice: meshsim then leaves that mode alone.
// Each thread also keeps its last few freed small blocks (up to 2 KiB, at most
// 24 KiB a thread) for its next allocations (internal/storage_blocks.h). Sanitizer
// builds use the system allocator, set nothing and cache nothing.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/array/shape.h"

namespace meshsim {

// The product of the dims (1 for a scalar). ShapeError naming the shape if a
// dim is negative or the product overflows int64_t.
int64_t num_elements(std::span<const int64_t> shape);
// "(4, 2)"; a 1-d shape is "(4)" and a scalar "()". Also used for indices.
std::string shape_to_string(std::span<const int64_t> shape);

class Array;
namespace detail {
// Internal: runtime/array/internal/counted_array.h.
Array empty_counted(const Shape& shape, int64_t size, DType dtype);
}  // namespace detail

class Array {
 public:
  // float32 of shape (0). Holds no storage and allocates nothing.
  Array() noexcept : dtype_(DType::kFloat32), shape_{0}, size_(0) {}
  // Copies share the storage (copy-on-write). A moved-from Array is a scalar
  // zero of its dtype, usable as any other (it shares a read-only zero).
  Array(const Array&) = default;
  Array& operator=(const Array&) = default;
  Array(Array&& other) noexcept
      : dtype_(other.dtype_),
        shape_(std::move(other.shape_)),
        size_(std::exchange(other.size_, 1)),
        storage_(std::exchange(other.storage_, Storage::zero())) {
    other.shape_.clear();
  }
  Array& operator=(Array&& other) noexcept {
    if (this == &other) return *this;
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    other.shape_.clear();
    size_ = std::exchange(other.size_, 1);
    storage_ = std::exchange(other.storage_, Storage::zero());
    return *this;
  }
  ~Array() = default;

  // The most bytes one Array may hold: 2^47 (128 TiB), the user address space
  // of x86-64 and AArch64 with 4-level page tables, so no larger allocation
  // could succeed. Every function that allocates (the factories, clone,
  // astype, a copy-on-write) throws ShapeError naming the shape, the dtype and
  // the element count for a shape that needs more, and likewise when the
  // allocator refuses a smaller request: std::bad_alloc is not let through,
  // since to the caller both mean "this shape is too big for this process".
  static constexpr int64_t kMaxBytes = int64_t{1} << 47;

  // Factories. A negative dim, a dim product that overflows int64_t and a
  // shape of more than kMaxBytes are ShapeErrors naming the shape.
  // Uninitialized elements.
  static Array empty(Shape shape, DType dtype);
  // Uninitialized elements of `dtype` in `like`'s shape: empty(like.shape(),
  // dtype) without the shape's copy to pass and its count again (a
  // collective's result, every call).
  static Array empty_like(const Array& like, DType dtype) {
    return Array(like.shape_, like.size_, dtype);
  }
  static Array zeros(Shape shape, DType dtype);
  // `value` converted as by astype from float64 (bool: value != 0).
  static Array full(Shape shape, DType dtype, double value);
  // Element i (row-major) is i converted to the dtype: integers wrap modulo
  // their width, floats round to nearest, and bool is i % 2 != 0 so that a
  // bool iota still has distinct neighbours.
  static Array iota(Shape shape, DType dtype);
  // `values` in row-major order; the dtype is dtype_of<T>(). ShapeError
  // naming the shape and the count if values.size() != num_elements(shape).
  // T is given explicitly: Array::from_values<float>({2, 2}, {1, 2, 3, 4}).
  template <class T>
  static Array from_values(Shape shape, std::span<const T> values);
  template <class T>
  static Array from_values(Shape shape, std::initializer_list<T> values) {
    return from_values<T>(std::move(shape), std::span<const T>(values.begin(), values.size()));
  }
  // A rank-0 array.
  template <class T>
  static Array scalar(T value) {
    return from_values<T>({}, std::span<const T>(&value, 1));
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  // Number of elements.
  int64_t size() const { return size_; }
  size_t nbytes() const { return static_cast<size_t>(size_) * dtype_size(dtype_); }
  // dim(-1) is the last dim. ShapeError naming d and the shape if out of range.
  int64_t dim(int d) const;

  // Pointers and spans into the storage stay valid while some Array holding
  // it lives: not past the end of the statement for a temporary Array.
  // 64-byte aligned; null when nbytes() == 0.
  const std::byte* bytes() const { return storage_.data(); }
  // Copy-on-write: unshares the storage first.
  std::byte* mutable_bytes();
  // DTypeError naming T's dtype and the array's if they differ.
  template <class T>
  std::span<const T> span() const {
    check_dtype(dtype_of<T>(), "span");
    return {reinterpret_cast<const T*>(bytes()), static_cast<size_t>(size_)};
  }
  // Copy-on-write, like mutable_bytes.
  template <class T>
  std::span<T> mutable_span() {
    check_dtype(dtype_of<T>(), "mutable_span");
    return {reinterpret_cast<T*>(mutable_bytes()), static_cast<size_t>(size_)};
  }
  // One element by multi-index (one entry per dim, none for a scalar).
  // DTypeError as for span; ShapeError naming the index and the shape if the
  // index has the wrong length or is out of bounds (negative included).
  template <class T>
  T at(std::initializer_list<int64_t> index) const {
    check_dtype(dtype_of<T>(), "at");
    return reinterpret_cast<const T*>(bytes())[flat_index({index.begin(), index.size()})];
  }
  // Copy-on-write. T must be the dtype's type: set({0}, 1.0) on a float32
  // array is a DTypeError, write set({0}, 1.0f).
  template <class T>
  void set(std::initializer_list<int64_t> index, T value) {
    check_dtype(dtype_of<T>(), "set");
    const int64_t flat = flat_index({index.begin(), index.size()});
    reinterpret_cast<T*>(mutable_bytes())[flat] = value;
  }

  // The same storage with a new shape. One dim may be -1: it is inferred.
  // ShapeError naming both shapes if the element counts differ.
  Array reshape(Shape shape) const;
  // A deep copy that shares nothing.
  Array clone() const;
  // Elementwise conversion, as numpy's astype: bool -> 0/1, x -> bool is
  // x != 0, float -> int truncates toward zero (NaN -> 0; out-of-range values
  // saturate instead of being undefined), int -> int wraps, float -> float
  // rounds to nearest (float64 -> 16-bit floats via float32). The same dtype
  // returns a copy sharing storage.
  Array astype(DType dtype) const;
  // False for arrays without storage of their own (none, or a moved-from
  // array's shared zero).
  bool shares_storage_with(const Array& other) const {
    return storage_.data() != nullptr && storage_.data() == other.storage_.data() &&
           !storage_.is_zero();
  }

  // numpy-like, e.g. "[[0 1 2]\n [3 4 5]] dtype=int32 shape=(2, 3)". Arrays of
  // more than 1000 elements show the first and last 3 items of each dim
  // around "...", so printing any array is fast. An array without elements
  // is "[]" whatever its rank, as in numpy.
  std::string to_string() const;

 private:
  // A reference-counted, 64-byte-aligned block of bytes. unique() is an
  // acquire load that pairs with the release in the destructor, so an owner
  // that finds itself alone also sees every read former co-owners made before
  // letting go, and may write in place. (std::shared_ptr::use_count is a
  // relaxed load and gives no such ordering.)
  class Storage {
   public:
    // Of the data; also the size of the header that holds the count.
    static constexpr size_t kAlignment = 64;

    Storage() = default;
    explicit Storage(size_t nbytes);
    Storage(const Storage& other) noexcept;
    Storage(Storage&& other) noexcept : block_(std::exchange(other.block_, nullptr)) {}
    Storage& operator=(Storage other) noexcept {
      std::swap(block_, other.block_);
      return *this;
    }
    ~Storage();
    // The storage of every moved-from Array: one zero element of any dtype,
    // never freed, and never written (unique() is false, so a write copies).
    static Storage zero() noexcept {
      Storage s;
      s.block_ = &zero_.header;
      return s;
    }
    std::byte* data() const {
      return block_ ? reinterpret_cast<std::byte*>(block_) + kAlignment : nullptr;
    }
    // True also for no storage: there is nothing to share.
    bool unique() const;
    bool is_zero() const { return block_ == &zero_.header; }

   private:
    struct Block {
      std::atomic<int64_t> owners;
      uint8_t size_class;  // the allocator's (internal/storage_blocks.h)
    };
    struct Zero {
      Block header{0, 0};  // not counted: copies and destructors skip it
      alignas(kAlignment) std::byte data[kAlignment]{};
    };
    static Zero zero_;
    Block* block_ = nullptr;
  };

  // Allocates uninitialized storage.
  Array(Shape shape, DType dtype);
  // The same, for a shape already checked and counted (`size` elements).
  friend Array detail::empty_counted(const Shape& shape, int64_t size, DType dtype);
  Array(const Shape& shape, int64_t size, DType dtype)
      : dtype_(dtype), shape_(shape), size_(size), storage_(allocate(shape_, dtype_, size_)) {}
  // Storage for `size` elements of `dtype` (none for 0), with the size checks
  // and errors described at kMaxBytes.
  static Storage allocate(const Shape& shape, DType dtype, int64_t size);
  static void check_value_count(const Shape& shape, size_t count);
  void check_dtype(DType requested, const char* accessor) const;
  int64_t flat_index(std::span<const int64_t> index) const;

  DType dtype_;
  Shape shape_;
  int64_t size_;
  Storage storage_;
};

std::ostream& operator<<(std::ostream& os, const Array& array);

// Same dtype, same shape and bitwise-equal elements: -0.0 != 0.0, and a NaN
// equals a NaN with the same bits. This is the replication check's notion.
bool array_equal(const Array& a, const Array& b);
// Same dtype and shape, and |a - b| <= atol + rtol * |b| elementwise in
// float64 (not symmetric, as numpy). Equal infinities are close; NaN is never
// close, even to NaN.
bool allclose(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-8);
// "" if array_equal(a, b). Otherwise says why not: both dtypes, both shapes,
// or the first (row-major) differing multi-index and both values there.
std::string first_difference(const Array& a, const Array& b);
// "" if allclose(a, b, rtol, atol). Otherwise says why not: both dtypes, both
// shapes, or the first (row-major) multi-index out of tolerance with both
// values, |a - b| and the tolerance there, and how many elements are out.
std::string first_not_close(const Array& a, const Array& b, double rtol = 1e-5,
                            double atol = 1e-8);

template <class T>
Array Array::from_values(Shape shape, std::span<const T> values) {
  check_value_count(shape, values.size());
  Array out(std::move(shape), dtype_of<T>());
  std::copy(values.begin(), values.end(), out.mutable_span<T>().begin());
  return out;
}

}  // namespace meshsim
