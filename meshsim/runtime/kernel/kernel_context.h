#pragma once
// KernelContext: what a device's kernel code receives (run_kernel.h) — its
// symmetric buffers, its semaphores and its peers' — and AsyncCopy, a DMA
// between buffers. Names follow Pallas TPU (pltpu.semaphore_signal,
// make_async_remote_copy, ...); problems are errors, never prints.
//
// Usable only by the device's own code inside the kernel body it was given
// to; any call from elsewhere, or after the kernel returned, throws
// RuntimeUsageError naming the kernel and the device (the object lives as
// long as the Runtime, so a kept reference fails cleanly).
//
// Waits (semaphore_wait, AsyncCopy::wait_*) block like meshsim's
// collectives: another device's failure cancels them, and a kernel whose
// waits can never complete fails with a DeadlockError that names, per
// device, the semaphore it waits on, the value it waits for and the value it
// holds.
//
// Copies run eagerly: start() moves the bytes and signals both semaphores
// before it returns. Counting is exact, so a kernel that waits for what it
// did not copy, or never waits for what it did, fails as it would on a TPU
// (a deadlock; a semaphore left non-zero when the kernel exits).

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/kernel/device_id.h"
#include "meshsim/runtime/kernel/kernel_spec.h"

namespace meshsim {

class KernelContext;
struct KernelGroup;
struct SemaphoreCell;

// One DMA from `src` on this device to `dst` on a device of the kernel
// (itself, for a local copy). A descriptor: start() may be called again for
// another copy of the same bytes; the device that receives waits with its
// own descriptor for the same `dst` (Pallas does the same).
class AsyncCopy {
 public:
  // Copies the bytes, then adds their count to the receive semaphore on the
  // destination device and to the send semaphore here (a local copy: to its
  // one semaphore, once).
  void start();
  // Waits until the send semaphore here holds src's byte count, and takes
  // it. RuntimeUsageError for a local copy, which has no send semaphore.
  void wait_send();
  // Waits until the receive semaphore here holds dst's byte count, and takes
  // it (called on the device the copy wrote to).
  void wait_recv();
  // A local copy's wait: wait_recv().
  void wait() { wait_recv(); }

 private:
  friend class KernelContext;
  AsyncCopy(KernelContext& kernel, uint64_t generation, BufferRef src, BufferRef dst,
            DmaSemaphore send, DmaSemaphore recv, int target)
      : kernel_(&kernel), generation_(generation), src_(std::move(src)), dst_(std::move(dst)),
        send_(send), recv_(recv), target_(target) {}
  KernelContext* kernel_;
  uint64_t generation_;  // the kernel it was made in (KernelContext::generation_)
  BufferRef src_, dst_;
  DmaSemaphore send_, recv_;
  int target_;  // position of the destination device
  bool local_ = false;  // make_async_copy: one semaphore, signalled once
};

class KernelContext {
 public:
  // The most a semaphore may hold (a signal past it is a SemaphoreError).
  static constexpr int64_t kMaxSemaphoreValue = (int64_t{1} << 30) - 1;

  KernelContext(const KernelContext&) = delete;
  KernelContext& operator=(const KernelContext&) = delete;

  // The device's context in the enclosing launch (axis_index and the like).
  DeviceContext& device();
  // This device's logical id (its position in the mesh) and the device count.
  int device_id() const;
  int num_devices() const;
  const std::string& name() const;

  // Adds `inc` (in [1, kMaxSemaphoreValue]) to `sem` here or on `device`.
  // InvalidArgumentError for another `inc` or a semaphore the spec does not
  // declare; SemaphoreError when the value would pass kMaxSemaphoreValue;
  // DeviceIdError for a device outside the mesh.
  void semaphore_signal(Semaphore sem, int64_t inc = 1);
  void semaphore_signal(Semaphore sem, int64_t inc, DeviceId device);
  // Waits until `sem` here holds at least `value` (in [1,
  // kMaxSemaphoreValue]), then subtracts it.
  void semaphore_wait(Semaphore sem, int64_t value = 1);
  // The value `sem` holds here now.
  int64_t semaphore_read(Semaphore sem);
  int64_t semaphore_read(DmaSemaphore sem);
  // The kernel's barrier semaphore (one per device, shared by the kernels
  // of that collective id). CollectiveIdError if the spec has no collective id.
  Semaphore barrier_semaphore();

  // This device's bytes of `ref`. DTypeError unless T is its dtype;
  // InvalidArgumentError for a region outside the buffers the spec declares.
  template <class T>
  std::span<const T> read(const BufferRef& ref) {
    return {reinterpret_cast<const T*>(access(ref, dtype_of<T>(), "read")),
            ref.nbytes() / sizeof(T)};
  }
  template <class T>
  std::span<T> write(const BufferRef& ref) {
    return {reinterpret_cast<T*>(access(ref, dtype_of<T>(), "write")), ref.nbytes() / sizeof(T)};
  }
  // A copy of `ref` here, and `ref` set from `value` (its shape and dtype:
  // CollectiveShapeError / DTypeError naming both otherwise).
  Array load(const BufferRef& ref);
  void store(const BufferRef& ref, const Array& value);

  // A DMA from `src` here to `dst` on `device`, signalling `send` here and
  // `recv` there. CollectiveShapeError if src and dst differ in size (and
  // DTypeError in dtype), naming both; DeviceIdError; SemaphoreError for a
  // copy larger than kMaxSemaphoreValue bytes (its semaphores could not
  // count it).
  AsyncCopy make_async_remote_copy(const BufferRef& src, const BufferRef& dst, DmaSemaphore send,
                                   DmaSemaphore recv, DeviceId device);
  // A DMA between two buffers of this device, signalling `sem`.
  AsyncCopy make_async_copy(const BufferRef& src, const BufferRef& dst, DmaSemaphore sem);

 private:
  friend class AsyncCopy;
  friend struct KernelRun;
  KernelContext() = default;

  // RuntimeUsageError naming `what` unless called by the device's own code
  // inside this kernel (`generation`: the kernel a copy was made in).
  void check_usable(const char* what) const;
  void check_usable(const char* what, uint64_t generation) const;
  // "kernel 'name' on device 3": how messages begin.
  std::string who() const;
  // The bytes of `ref` on the device at `position`; InvalidArgumentError if
  // `ref` is not inside a buffer the spec declares.
  std::byte* bytes_of(const BufferRef& ref, int position, const char* what) const;
  std::byte* access(const BufferRef& ref, DType dtype, const char* what);
  SemaphoreCell& cell(Semaphore sem, int position, const char* what) const;
  SemaphoreCell& cell(DmaSemaphore sem, int position, const char* what) const;
  void start(const AsyncCopy& copy);
  void wait_dma(DmaSemaphore sem, size_t bytes, const char* what);

  DeviceContext* device_ = nullptr;  // set once: a context serves one device
  // The current kernel's (valid while active_):
  const KernelSpec* spec_ = nullptr;
  KernelGroup* group_ = nullptr;
  int position_ = 0;
  std::string name_;
  // Counts the device's kernels at this nesting depth; active_ while one runs.
  uint64_t generation_ = 0;
  std::atomic<bool> active_{false};
};

}  // namespace meshsim
