#pragma once
// What a TPU-style kernel allocates on every device it runs on (run_kernel.h):
// symmetric buffers, regular and DMA semaphores, and, with a collective id,
// a barrier semaphore. Names follow Pallas (pltpu.SemaphoreType, VMEM scratch).
//
// Every device of the kernel gets its own copy of each buffer (zero-filled)
// and semaphore (0) at kernel entry; a BufferRef or Semaphore names the same
// one on every device, so a device addresses its peer's copy by the peer's
// id. The devices must declare the same spec (CollectiveMismatchError
// otherwise). A spec is plain data: build it once and use it in any number
// of kernels.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/array/dtype.h"

namespace meshsim {

// How a kernel's DMAs move their bytes (KernelSpec::set_copy_mode). A
// correct kernel gives the same result in every mode: one that reads a
// destination before waiting for its copy, or writes a source before the
// copy's send completed, sees different bytes in another mode.
enum class CopyMode {
  kEager,   // start() moves the bytes and signals before it returns
  kOnWait,  // as late as a correct kernel allows: the source is read when
            // the issuer waits for the send, the destination written when
            // the receiver waits for the copy (one copy at a time, oldest
            // first, until its wait is met), the rest when the kernel ends.
            // A kernel that polls semaphore_read for a copy waits forever.
  kRandom,  // as kOnWait, but in an order drawn from the seed: sources are
            // read in any order, copies from several devices to one
            // semaphore land in any order (those from one device keep
            // theirs, as DMAs on one path do), and some copies land early,
            // at later start() calls
};

// "eager", "on_wait" or "random", as MESHSIM_KERNEL_COPIES spells them.
const char* copy_mode_name(CopyMode mode);

// A contiguous, row-major region of a symmetric buffer: the whole buffer, or
// what at() and slice() cut from it along its leading dimensions (as
// `ref.at[i]` and `ref.at[pl.ds(start, size)]` do in Pallas).
class BufferRef {
 public:
  // Copied, also where moved from: a moved-from region would keep its
  // buffer and offset with a scalar's shape.
  BufferRef(const BufferRef&) = default;
  BufferRef& operator=(const BufferRef&) = default;
  int buffer() const { return buffer_; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  // Where the region starts in its buffer, and how long it is, in bytes.
  size_t byte_offset() const { return offset_; }
  size_t nbytes() const;

  // The sub-region at `index` of the leading dimension, which it drops.
  // ShapeError naming the index and the shape if the region is a scalar or
  // the index is outside [0, shape()[0]).
  BufferRef at(int64_t index) const;
  // Rows [start, start + size) of the leading dimension, which keeps its
  // place. ShapeError naming the range and the shape if it does not fit.
  BufferRef slice(int64_t start, int64_t size) const;

  // "buffer 2 bytes [256, 512) bfloat16(8, 16)", for messages.
  std::string to_string() const;

 private:
  friend class KernelSpec;
  BufferRef(int buffer, Shape shape, DType dtype, size_t offset)
      : buffer_(buffer), shape_(std::move(shape)), dtype_(dtype), offset_(offset) {}
  int buffer_ = 0;
  Shape shape_;
  DType dtype_ = DType::kFloat32;
  size_t offset_ = 0;
};

// A regular semaphore: signalled and waited on by kernel code
// (KernelContext::semaphore_signal / semaphore_wait).
class Semaphore {
 public:
  int index() const { return index_; }
  bool is_barrier() const { return index_ == kBarrier; }

 private:
  friend class KernelSpec;
  friend class KernelContext;
  static constexpr int kBarrier = -1;
  explicit Semaphore(int index) : index_(index) {}
  int index_;
};

// A DMA semaphore: counts bytes. A copy adds its size to its send semaphore
// (on the device that issued it, once the source may be reused) and to its
// receive semaphore (on the device it wrote to, once the bytes are there);
// waiting for a copy subtracts the same size.
class DmaSemaphore {
 public:
  int index() const { return index_; }

 private:
  friend class KernelSpec;
  explicit DmaSemaphore(int index) : index_(index) {}
  int index_;
};

class KernelSpec {
 public:
  // The most buffers, and semaphores of each kind, one spec may declare.
  static constexpr int kMaxBuffers = 4096;
  static constexpr int kMaxSemaphores = 4096;

  // `name` appears in every message about the kernel. The copy mode and race
  // detection start from the environment, so a test suite can be run again
  // in another mode unchanged: MESHSIM_KERNEL_COPIES=eager | on_wait |
  // random[:SEED] and MESHSIM_KERNEL_RACES=0 | 1 (InvalidArgumentError naming
  // the variable for another value).
  explicit KernelSpec(std::string name = "kernel");
  // Copied, also where moved from: a moved-from spec would keep its
  // semaphore counts with no buffers.
  KernelSpec(const KernelSpec&) = default;
  KernelSpec& operator=(const KernelSpec&) = default;

  // Declares a symmetric buffer. ShapeError for a negative dim or a shape
  // too large for an Array (Array::kMaxBytes); InvalidArgumentError past
  // kMaxBuffers.
  BufferRef buffer(Shape shape, DType dtype);
  // Declares a regular / DMA semaphore. InvalidArgumentError past kMaxSemaphores.
  Semaphore semaphore();
  DmaSemaphore dma_semaphore();
  // Gives the kernel a barrier semaphore (KernelContext::barrier_semaphore),
  // as Mosaic's collective_id does. No two kernels of one Runtime may hold
  // the same id at once (CollectiveIdError). InvalidArgumentError if negative.
  KernelSpec& set_collective_id(int id);
  // How copies run; `seed` drives kRandom: it fixes each device's choices,
  // so a kernel whose devices do not race to land one copy (an issuer early,
  // its receiver by waiting) gives the same answer from the same seed.
  KernelSpec& set_copy_mode(CopyMode mode, uint64_t seed = 0);
  // Race detection: every read, write, load and store of a buffer and every
  // DMA's read of its source and write of its destination is checked for a
  // conflicting access (one of them a write, overlapping bytes) that is not
  // ordered before it by happens-before — program order on a device, and a
  // semaphore wait after the signal (or the copy) it takes. DataRaceError
  // names both accesses. Happens-before is tracked with vector clocks over
  // the devices and, per device, its DMAs' reads and writes, so the copies
  // one device started are ordered among themselves (waiting for a later
  // one's receive also orders an earlier one's write). A span from read() or
  // write() is checked when taken, not at each element.
  KernelSpec& set_race_detection(bool on);

  const std::string& name() const { return name_; }
  std::optional<int> collective_id() const { return collective_id_; }
  struct BufferDecl {
    Shape shape;
    DType dtype;
  };
  std::span<const BufferDecl> buffers() const { return buffers_; }
  int semaphores() const { return semaphores_; }
  int dma_semaphores() const { return dma_semaphores_; }
  CopyMode copy_mode() const { return copy_mode_; }
  uint64_t copy_seed() const { return copy_seed_; }
  bool race_detection() const { return race_detection_; }

 private:
  std::string name_;
  std::vector<BufferDecl> buffers_;
  int semaphores_ = 0;
  int dma_semaphores_ = 0;
  std::optional<int> collective_id_;
  CopyMode copy_mode_ = CopyMode::kEager;
  uint64_t copy_seed_ = 0;
  bool race_detection_ = false;
};

}  // namespace meshsim
