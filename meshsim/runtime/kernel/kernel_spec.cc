#include "meshsim/runtime/kernel/kernel_spec.h"

#include <cstdlib>
#include <string_view>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/internal/format.h"

namespace meshsim {

size_t BufferRef::nbytes() const {
  return static_cast<size_t>(num_elements(shape_)) * dtype_size(dtype_);
}

BufferRef BufferRef::at(int64_t index) const {
  if (shape_.empty() || index < 0 || index >= shape_[0]) {
    throw ShapeError("BufferRef::at(" + std::to_string(index) + ") on " + to_string() +
                     (shape_.empty() ? ": a scalar has no dimension to index"
                                     : ": the index must be in [0, " + std::to_string(shape_[0]) +
                                           ")"));
  }
  Shape rest(shape_.begin() + 1, shape_.end());
  const size_t row = static_cast<size_t>(num_elements(rest)) * dtype_size(dtype_);
  return BufferRef(buffer_, std::move(rest), dtype_, offset_ + static_cast<size_t>(index) * row);
}

BufferRef BufferRef::slice(int64_t start, int64_t size) const {
  if (shape_.empty() || start < 0 || size < 0 || start > shape_[0] || size > shape_[0] - start) {
    throw ShapeError("BufferRef::slice(" + std::to_string(start) + ", " + std::to_string(size) +
                     ") on " + to_string() +
                     (shape_.empty() ? ": a scalar has no dimension to slice"
                                     : ": rows [start, start + size) must lie in [0, " +
                                           std::to_string(shape_[0]) + ")"));
  }
  Shape shape = shape_;
  shape[0] = size;
  const size_t row = static_cast<size_t>(num_elements({shape_.begin() + 1, shape_.end()})) *
                     dtype_size(dtype_);
  return BufferRef(buffer_, std::move(shape), dtype_, offset_ + static_cast<size_t>(start) * row);
}

std::string BufferRef::to_string() const {
  return "buffer " + std::to_string(buffer_) + " bytes [" + std::to_string(offset_) + ", " +
         std::to_string(offset_ + nbytes()) + ") " + std::string(dtype_name(dtype_)) +
         shape_to_string(shape_);
}

const char* copy_mode_name(CopyMode mode) {
  switch (mode) {
    case CopyMode::kEager:
      return "eager";
    case CopyMode::kOnWait:
      return "on_wait";
    case CopyMode::kRandom:
      return "random";
  }
  return "?";
}

KernelSpec::KernelSpec(std::string name) : name_(std::move(name)) {
  if (const char* env = std::getenv("MESHSIM_KERNEL_COPIES"); env != nullptr && *env != '\0') {
    const std::string_view value(env);
    if (value == "eager") {
      copy_mode_ = CopyMode::kEager;
    } else if (value == "on_wait") {
      copy_mode_ = CopyMode::kOnWait;
    } else if (value == "random") {
      copy_mode_ = CopyMode::kRandom;
    } else if (value.starts_with("random:") && value.size() > 7 &&
               value.find_first_not_of("0123456789", 7) == std::string_view::npos &&
               value.size() <= 7 + 19) {
      copy_mode_ = CopyMode::kRandom;
      copy_seed_ = std::stoull(std::string(value.substr(7)));
    } else {
      throw InvalidArgumentError("MESHSIM_KERNEL_COPIES=" + quote_text(value) +
                                 ": expected eager, on_wait, random or random:SEED");
    }
  }
  if (const char* env = std::getenv("MESHSIM_KERNEL_RACES"); env != nullptr && *env != '\0') {
    const std::string_view value(env);
    if (value != "0" && value != "1") {
      throw InvalidArgumentError("MESHSIM_KERNEL_RACES=" + quote_text(value) +
                                 ": expected 0 or 1");
    }
    race_detection_ = value == "1";
  }
}

KernelSpec& KernelSpec::set_copy_mode(CopyMode mode, uint64_t seed) {
  if (mode != CopyMode::kEager && mode != CopyMode::kOnWait && mode != CopyMode::kRandom) {
    throw InvalidArgumentError("kernel '" + name_ + "': copy mode " +
                               std::to_string(static_cast<int>(mode)) + " is not a CopyMode");
  }
  copy_mode_ = mode;
  copy_seed_ = seed;
  return *this;
}

KernelSpec& KernelSpec::set_race_detection(bool on) {
  race_detection_ = on;
  return *this;
}

BufferRef KernelSpec::buffer(Shape shape, DType dtype) {
  if (static_cast<int>(buffers_.size()) >= kMaxBuffers) {
    throw InvalidArgumentError("kernel '" + name_ + "' declares more than " +
                               std::to_string(kMaxBuffers) + " buffers");
  }
  const int64_t elements = num_elements(shape);  // ShapeError for a negative dim or overflow
  if (elements > Array::kMaxBytes / static_cast<int64_t>(dtype_size(dtype))) {
    throw ShapeError("kernel '" + name_ + "' buffer " + std::string(dtype_name(dtype)) +
                     shape_to_string(shape) + " needs more than Array::kMaxBytes");
  }
  buffers_.push_back({shape, dtype});
  return BufferRef(static_cast<int>(buffers_.size()) - 1, std::move(shape), dtype, 0);
}

Semaphore KernelSpec::semaphore() {
  if (semaphores_ >= kMaxSemaphores) {
    throw InvalidArgumentError("kernel '" + name_ + "' declares more than " +
                               std::to_string(kMaxSemaphores) + " semaphores");
  }
  return Semaphore(semaphores_++);
}

DmaSemaphore KernelSpec::dma_semaphore() {
  if (dma_semaphores_ >= kMaxSemaphores) {
    throw InvalidArgumentError("kernel '" + name_ + "' declares more than " +
                               std::to_string(kMaxSemaphores) + " DMA semaphores");
  }
  return DmaSemaphore(dma_semaphores_++);
}

KernelSpec& KernelSpec::set_collective_id(int id) {
  if (id < 0) {
    throw InvalidArgumentError("kernel '" + name_ + "': collective id " + std::to_string(id) +
                               " is negative");
  }
  collective_id_ = id;
  return *this;
}

}  // namespace meshsim
