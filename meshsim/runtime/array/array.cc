#include "meshsim/runtime/array/array.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <ostream>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/internal/counted_array.h"
#include "meshsim/runtime/array/internal/storage_blocks.h"

namespace meshsim {
namespace {

// numpy's cast where numpy defines the result; saturation where C++ leaves it
// undefined (a float out of an integer's range).
template <class To, class From>
To convert(From x) {
  if constexpr (std::is_same_v<To, bool>) {
    return static_cast<double>(x) != 0;
  } else if constexpr (kIsIntegralType<To> && kIsFloatingType<From>) {
    using Limits = std::numeric_limits<To>;
    const double value = static_cast<double>(x);
    if (std::isnan(value)) return 0;
    if (value <= static_cast<double>(Limits::lowest())) return Limits::lowest();
    if (value >= static_cast<double>(Limits::max())) return Limits::max();
    return static_cast<To>(value);
  } else {
    return static_cast<To>(x);
  }
}

std::string format_element(const Array& array, int64_t flat) {
  return visit_dtype(array.dtype(), [&](auto t) -> std::string {
    using T = typename decltype(t)::type;
    const T x = array.span<T>()[flat];
    if constexpr (std::is_same_v<T, bool>) {
      return x ? "true" : "false";
    } else if constexpr (kIsFloatingType<T>) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", static_cast<double>(x));
      return text;
    } else {
      return std::to_string(x);
    }
  });
}

Shape unravel(int64_t flat, const Shape& shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// numpy's str() layout: elements right-aligned to one width, one row per
// line, a blank line between 2-d blocks; a summarized dim shows its edge items
// around "...".
class Printer {
 public:
  explicit Printer(const Array& array)
      : array_(array), strides_(array.rank(), 1), summarize_(array.size() > kSummarizeAbove) {
    for (int d = array.rank() - 2; d >= 0; --d) strides_[d] = strides_[d + 1] * array.dim(d + 1);
    collect(0, 0);
    for (const std::string& item : items_) width_ = std::max(width_, item.size());
  }

  std::string print() {
    std::string out;
    write(0, 0, out);
    return out;
  }

 private:
  static constexpr int64_t kSummarizeAbove = 1000;
  static constexpr int64_t kEdgeItems = 3;

  // The indices of dim d to show, in order; -1 stands for "...".
  std::vector<int64_t> shown(int d) const {
    const int64_t n = array_.dim(d);
    std::vector<int64_t> indices;
    for (int64_t i = 0; i < n; ++i) {
      if (summarize_ && n > 2 * kEdgeItems && i == kEdgeItems) {
        indices.push_back(-1);
        i = n - kEdgeItems;
      }
      indices.push_back(i);
    }
    return indices;
  }

  void collect(int d, int64_t offset) {
    if (d == array_.rank()) {
      items_.push_back(format_element(array_, offset));
      return;
    }
    for (int64_t i : shown(d)) {
      if (i >= 0) collect(d + 1, offset + i * strides_[d]);
    }
  }

  void write(int d, int64_t offset, std::string& out) {
    if (d == array_.rank()) {
      const std::string& item = items_[next_item_++];
      out.append(width_ - item.size(), ' ') += item;
      return;
    }
    const int inner = array_.rank() - 1 - d;
    const std::string separator =
        inner == 0 ? " " : std::string(inner, '\n') + std::string(d + 1, ' ');
    out += '[';
    bool first = true;
    for (int64_t i : shown(d)) {
      if (!first) out += separator;
      first = false;
      if (i < 0) {
        out += "...";
      } else {
        write(d + 1, offset + i * strides_[d], out);
      }
    }
    out += ']';
  }

  const Array& array_;
  std::vector<int64_t> strides_;
  bool summarize_;
  std::vector<std::string> items_;
  size_t width_ = 0;
  size_t next_item_ = 0;
};

}  // namespace

int64_t num_elements(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ShapeError("negative dim in shape " + shape_to_string(shape));
    if (__builtin_mul_overflow(n, d, &n)) {
      throw ShapeError("shape " + shape_to_string(shape) + " has more than 2^63 elements");
    }
  }
  return n;
}

std::string shape_to_string(std::span<const int64_t> shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + ")";
}

// The count sits in a header as large as the alignment, so the data after it
// is aligned too and one allocation holds both. The memory comes from oneTBB's
// scalable allocator (internal/storage_blocks.h), whose large-object cache
// keeps freed multi-MiB blocks mapped, so a collective that returns a fresh
// 16 MiB result every call does not mmap and page-fault it in every time
// (glibc malloc did: 4x the time of the copy); small blocks are recycled by
// the thread that frees them.
constinit Array::Storage::Zero Array::Storage::zero_{};

Array::Storage::Storage(size_t nbytes) {
  static_assert(sizeof(Block) <= kAlignment && kAlignment == detail::kStorageBlockAlignment);
  static_assert(offsetof(Zero, data) == kAlignment);  // data(), as for an allocated block
  const detail::StorageBlock raw = detail::allocate_storage_block(nbytes + kAlignment);
  if (raw.memory == nullptr) throw std::bad_alloc();
  block_ = new (raw.memory) Block{1, raw.size_class};
}

// Relaxed, as in std::shared_ptr: a new owner is made from an existing one,
// which keeps the block alive meanwhile.
Array::Storage::Storage(const Storage& other) noexcept : block_(other.block_) {
  if (block_ && !is_zero()) block_->owners.fetch_add(1, std::memory_order_relaxed);
}

// Release publishes this owner's accesses to the next owner that finds itself
// unique (or deletes); acquire makes the deleting owner see everyone's. An
// owner that finds itself alone frees without the read-modify-write: nobody
// else holds the block, so nobody can copy it meanwhile (most results die
// unshared).
Array::Storage::~Storage() {
  if (!block_ || is_zero()) return;
  if (block_->owners.load(std::memory_order_acquire) == 1 ||
      block_->owners.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    const uint8_t size_class = block_->size_class;
    block_->~Block();
    detail::free_storage_block(block_, size_class);
  }
}

bool Array::Storage::unique() const {
  return !block_ || block_->owners.load(std::memory_order_acquire) == 1;
}

Array::Array(Shape shape, DType dtype)
    : dtype_(dtype),
      shape_(std::move(shape)),
      size_(num_elements(shape_)),
      storage_(allocate(shape_, dtype_, size_)) {}

Array::Storage Array::allocate(const Shape& shape, DType dtype, int64_t size) {
  const auto item = static_cast<int64_t>(dtype_size(dtype));
  const auto describe = [&] {
    return "shape " + shape_to_string(shape) + " of " + std::string(dtype_name(dtype)) + " has " +
           std::to_string(size) + " elements of " + std::to_string(item) + " bytes";
  };
  // An overflow-checked multiply, not a division of the limit: a division
  // costs tens of cycles on every allocation.
  int64_t bytes = 0;
  if (__builtin_mul_overflow(size, item, &bytes) || bytes > kMaxBytes) {
    throw ShapeError(describe() + ": more than the 2^47 bytes (128 TiB) an Array may hold");
  }
  if (size == 0) return Storage();
  try {
    return Storage(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    throw ShapeError(describe() + ": the allocator could not provide " + std::to_string(bytes) +
                     " bytes");
  }
}

Array Array::empty(Shape shape, DType dtype) { return Array(std::move(shape), dtype); }

Array detail::empty_counted(const Shape& shape, int64_t size, DType dtype) {
  return Array(shape, size, dtype);
}

Array Array::zeros(Shape shape, DType dtype) {
  Array out(std::move(shape), dtype);
  if (out.nbytes() > 0) std::memset(out.mutable_bytes(), 0, out.nbytes());
  return out;
}

Array Array::full(Shape shape, DType dtype, double value) {
  Array out(std::move(shape), dtype);
  visit_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    std::ranges::fill(out.mutable_span<T>(), convert<T>(value));
  });
  return out;
}

Array Array::iota(Shape shape, DType dtype) {
  Array out(std::move(shape), dtype);
  visit_dtype(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    const std::span<T> values = out.mutable_span<T>();
    for (size_t i = 0; i < values.size(); ++i) {
      const auto count = static_cast<int64_t>(std::is_same_v<T, bool> ? i % 2 : i);
      values[i] = convert<T>(count);
    }
  });
  return out;
}

int64_t Array::dim(int d) const {
  if (d < -rank() || d >= rank()) {
    throw ShapeError("dim " + std::to_string(d) + " is out of range for shape " +
                     shape_to_string(shape_) + " of rank " + std::to_string(rank()));
  }
  return shape_[d < 0 ? d + rank() : d];
}

std::byte* Array::mutable_bytes() {
  if (!storage_.unique()) {
    Storage copy = allocate(shape_, dtype_, size_);
    std::memcpy(copy.data(), storage_.data(), nbytes());
    storage_ = std::move(copy);
  }
  return storage_.data();
}

void Array::check_value_count(const Shape& shape, size_t count) {
  const int64_t n = num_elements(shape);
  if (static_cast<size_t>(n) != count) {
    throw ShapeError(std::to_string(count) + " values given for shape " + shape_to_string(shape) +
                     ", which has " + std::to_string(n) + " elements");
  }
}

void Array::check_dtype(DType requested, const char* accessor) const {
  if (requested != dtype_) {
    throw DTypeError(std::string(accessor) + "<" + std::string(dtype_name(requested)) +
                     "> of a " + std::string(dtype_name(dtype_)) + " array of shape " +
                     shape_to_string(shape_));
  }
}

int64_t Array::flat_index(std::span<const int64_t> index) const {
  bool fits = std::ssize(index) == rank();
  int64_t flat = 0;
  for (int d = 0; fits && d < rank(); ++d) {
    fits = index[d] >= 0 && index[d] < shape_[d];
    flat = flat * shape_[d] + index[d];
  }
  if (!fits) {
    throw ShapeError("index " + shape_to_string(index) + " is out of bounds for shape " +
                     shape_to_string(shape_));
  }
  return flat;
}

Array Array::reshape(Shape shape) const {
  const auto error = [&](const std::string& why) {
    return ShapeError("cannot reshape an array of shape " + shape_to_string(shape_) + " into " +
                      shape_to_string(shape) + ": " + why);
  };
  if (std::ranges::any_of(shape, [](int64_t d) { return d < -1; })) throw error("negative dim");
  const auto inferred = std::ranges::find(shape, -1);
  if (inferred != shape.end()) {
    if (std::find(inferred + 1, shape.end(), -1) != shape.end()) throw error("more than one -1");
    *inferred = 1;
    const int64_t known = num_elements(shape);
    *inferred = known != 0 && size_ % known == 0 ? size_ / known : -1;
    if (*inferred < 0) {
      throw error("no dim in place of -1 gives " + std::to_string(size_) + " elements");
    }
  }
  const int64_t n = num_elements(shape);
  if (n != size_) {
    throw error("it has " + std::to_string(size_) + " elements, not " + std::to_string(n));
  }
  Array out = *this;
  out.shape_ = std::move(shape);
  return out;
}

Array Array::clone() const {
  Array out(shape_, dtype_);
  if (nbytes() > 0) std::memcpy(out.mutable_bytes(), bytes(), nbytes());
  return out;
}

Array Array::astype(DType dtype) const {
  if (dtype == dtype_) return *this;
  Array out(shape_, dtype);
  visit_dtype(dtype_, [&](auto from) {
    using From = typename decltype(from)::type;
    visit_dtype(dtype, [&](auto to) {
      using To = typename decltype(to)::type;
      std::ranges::transform(span<From>(), out.mutable_span<To>().begin(), convert<To, From>);
    });
  });
  return out;
}

std::string Array::to_string() const {
  // numpy prints any array without elements as "[]", whatever its rank.
  const std::string elements = size_ == 0 ? "[]" : Printer(*this).print();
  return elements + " dtype=" + std::string(dtype_name(dtype_)) +
         " shape=" + shape_to_string(shape_);
}

std::ostream& operator<<(std::ostream& os, const Array& array) { return os << array.to_string(); }

bool array_equal(const Array& a, const Array& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.nbytes() == 0 || std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0);
}

namespace {

bool is_close(double x, double y, double rtol, double atol) {
  return x == y ||
         (std::isfinite(x) && std::isfinite(y) && std::abs(x - y) <= atol + rtol * std::abs(y));
}

// Calls f(i, a_i, b_i) with both elements as float64 for each row-major i
// until f returns false. a and b have one dtype and shape.
template <class F>
void for_each_pair(const Array& a, const Array& b, F&& f) {
  visit_dtype(a.dtype(), [&](auto t) {
    using T = typename decltype(t)::type;
    const std::span<const T> x = a.span<T>(), y = b.span<T>();
    for (size_t i = 0; i < x.size(); ++i) {
      if (!f(static_cast<int64_t>(i), static_cast<double>(x[i]), static_cast<double>(y[i]))) {
        return;
      }
    }
  });
}

std::string mismatch(const Array& a, const Array& b) {
  const auto name = [](const Array& array) { return std::string(dtype_name(array.dtype())); };
  if (a.dtype() != b.dtype()) return "dtypes differ: " + name(a) + " vs " + name(b);
  if (a.shape() != b.shape()) {
    return "shapes differ: " + shape_to_string(a.shape()) + " vs " + shape_to_string(b.shape());
  }
  return "";
}

std::string format_double(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", x);
  return text;
}

}  // namespace

bool allclose(const Array& a, const Array& b, double rtol, double atol) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  bool close = true;
  for_each_pair(a, b, [&](int64_t, double x, double y) {
    close = is_close(x, y, rtol, atol);
    return close;
  });
  return close;
}

std::string first_not_close(const Array& a, const Array& b, double rtol, double atol) {
  if (std::string why = mismatch(a, b); !why.empty()) return why;
  int64_t first = -1, count = 0;
  double x = 0, y = 0;  // at `first`
  for_each_pair(a, b, [&](int64_t i, double xi, double yi) {
    if (!is_close(xi, yi, rtol, atol) && count++ == 0) first = i, x = xi, y = yi;
    return true;
  });
  if (count == 0) return "";
  return "first element out of tolerance at index " +
         shape_to_string(unravel(first, a.shape())) + ": " + format_element(a, first) + " vs " +
         format_element(b, first) + " (|a - b| = " + format_double(std::abs(x - y)) +
         ", atol + rtol * |b| = " + format_double(atol + rtol * std::abs(y)) + "); " +
         std::to_string(count) + " of " + std::to_string(a.size()) +
         " elements out of tolerance";
}

std::string first_difference(const Array& a, const Array& b) {
  if (std::string why = mismatch(a, b); !why.empty()) return why;
  if (array_equal(a, b)) return "";
  const size_t item = dtype_size(a.dtype());
  int64_t i = 0;
  while (std::memcmp(a.bytes() + i * item, b.bytes() + i * item, item) == 0) ++i;
  return "first difference at index " + shape_to_string(unravel(i, a.shape())) + ": " +
         format_element(a, i) + " vs " + format_element(b, i);
}

}  // namespace meshsim
