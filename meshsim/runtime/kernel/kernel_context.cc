#include "meshsim/runtime/kernel/kernel_context.h"

#include <cstring>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/kernel/internal/kernel_shard.h"

namespace meshsim {
namespace {

constexpr int64_t kMaxValue = KernelContext::kMaxSemaphoreValue;

// Marks a wait for a semaphore's count, for deadlock and timeout reports
// (WaitNote), restoring what the device was marked with before.
class SemaphoreWaitScope {
 public:
  SemaphoreWaitScope(DeviceState& device, const char* op, const SemaphoreCell& cell,
                     const char* kind, int index, uint32_t consumed, int64_t target)
      : device_(device), outer_op_(device.current_op.load(std::memory_order_relaxed)) {
    WaitNote& note = device.wait_note;
    note.kind.store(kind, std::memory_order_relaxed);
    note.index.store(index, std::memory_order_relaxed);
    note.target.store(target, std::memory_order_relaxed);
    note.consumed.store(consumed, std::memory_order_relaxed);
    note.word.store(&cell.signalled, std::memory_order_release);
    device.current_op.store(op, std::memory_order_release);
  }
  ~SemaphoreWaitScope() {
    device_.current_op.store(outer_op_, std::memory_order_release);
    device_.wait_note.word.store(nullptr, std::memory_order_release);
  }
  SemaphoreWaitScope(const SemaphoreWaitScope&) = delete;
  SemaphoreWaitScope& operator=(const SemaphoreWaitScope&) = delete;

 private:
  DeviceState& device_;
  const char* outer_op_;
};

// Waits until `cell` holds `n`, then takes it. Only the cell's owner waits.
void take(DeviceContext& ctx, SemaphoreCell& cell, uint32_t n, const char* op, const char* kind,
          int index) {
  const uint32_t consumed = cell.consumed.load(std::memory_order_relaxed);
  const auto enough = [consumed, n](uint32_t value) { return WaitNote::held(value, consumed) >= n; };
  Waiter& waiter = DeviceHooks::waiter(ctx);
  if (!enough(cell.signalled.load())) {
    SemaphoreWaitScope scope(DeviceHooks::device(ctx), op, cell, kind, index, consumed, n);
    waiter.wait(cell.signalled, enough);
  }
  cell.consumed.store(consumed + n, std::memory_order_relaxed);
}

const char* kind_of(Semaphore sem) { return sem.is_barrier() ? "barrier semaphore" : "semaphore"; }

}  // namespace

std::string KernelContext::who() const {
  return "kernel '" + name_ + "' on device " + std::to_string(DeviceHooks::device(*device_).id);
}

void KernelContext::check_usable(const char* what) const {
  DeviceHooks::check_usable(*device_, what);
  if (!active_.load(std::memory_order_relaxed)) {
    throw RuntimeUsageError(std::string(what) + ": the kernel this context belongs to (" + who() +
                            ") has returned");
  }
}

void KernelContext::check_usable(const char* what, uint64_t generation) const {
  check_usable(what);
  if (generation != generation_) {
    throw RuntimeUsageError(std::string(what) + ": the copy was made in an earlier kernel than " +
                            who());
  }
}

DeviceContext& KernelContext::device() {
  check_usable("KernelContext::device");
  return *device_;
}

int KernelContext::device_id() const {
  check_usable("KernelContext::device_id");
  return position_;
}

int KernelContext::num_devices() const {
  check_usable("KernelContext::num_devices");
  return static_cast<int>(group_->shards.size());
}

const std::string& KernelContext::name() const {
  check_usable("KernelContext::name");
  return name_;
}

SemaphoreCell& KernelContext::cell(Semaphore sem, int position, const char* what) const {
  KernelShard& shard = *group_->shards[position];
  if (sem.is_barrier()) {
    if (!spec_->collective_id()) {
      throw CollectiveIdError(std::string(what) + ": " + who() +
                              " uses a barrier semaphore but has no collective id "
                              "(KernelSpec::set_collective_id)");
    }
    return shard.barrier_cell();
  }
  if (sem.index() < 0 || sem.index() >= shard.regular) {
    throw InvalidArgumentError(std::string(what) + ": " + who() + " has no semaphore " +
                               std::to_string(sem.index()) + " (its spec declares " +
                               std::to_string(shard.regular) + ")");
  }
  return shard.regular_cell(sem.index());
}

SemaphoreCell& KernelContext::cell(DmaSemaphore sem, int position, const char* what) const {
  KernelShard& shard = *group_->shards[position];
  if (sem.index() < 0 || sem.index() >= shard.dma) {
    throw InvalidArgumentError(std::string(what) + ": " + who() + " has no DMA semaphore " +
                               std::to_string(sem.index()) + " (its spec declares " +
                               std::to_string(shard.dma) + ")");
  }
  return shard.dma_cell(sem.index());
}

void KernelContext::semaphore_signal(Semaphore sem, int64_t inc) {
  check_usable("semaphore_signal");
  semaphore_signal(sem, inc, DeviceId(position_));
}

void KernelContext::semaphore_signal(Semaphore sem, int64_t inc, DeviceId device) {
  check_usable("semaphore_signal");
  if (inc < 1 || inc > kMaxValue) {
    throw InvalidArgumentError("semaphore_signal: " + who() + " signals " + kind_of(sem) + " " +
                               std::to_string(sem.index()) + " by " + std::to_string(inc) +
                               "; an increment must be in [1, " + std::to_string(kMaxValue) + "]");
  }
  int target = 0;
  try {
    target = device.position_in(device_->mesh());
  } catch (Error& e) {
    e.add_context("semaphore_signal: " + who());
    throw;
  }
  SemaphoreCell& c = cell(sem, target, "semaphore_signal");
  const int64_t before = c.value();
  if (before + inc > kMaxValue) {
    throw SemaphoreError("semaphore_signal: " + who() + " adds " + std::to_string(inc) + " to " +
                         kind_of(sem) + " " + std::to_string(sem.index()) + " of device " +
                         std::to_string(device_->mesh().device_at(target)) + ", which holds " +
                         std::to_string(before) + ": past the most a semaphore holds, " +
                         std::to_string(kMaxValue));
  }
  c.signalled.advance(static_cast<uint32_t>(inc));
}

void KernelContext::semaphore_wait(Semaphore sem, int64_t value) {
  check_usable("semaphore_wait");
  if (value < 1 || value > kMaxValue) {
    throw InvalidArgumentError("semaphore_wait: " + who() + " waits for " + kind_of(sem) + " " +
                               std::to_string(sem.index()) + " to reach " + std::to_string(value) +
                               "; the value must be in [1, " + std::to_string(kMaxValue) + "]");
  }
  take(*device_, cell(sem, position_, "semaphore_wait"), static_cast<uint32_t>(value),
       "semaphore_wait", kind_of(sem), sem.is_barrier() ? -1 : sem.index());
}

int64_t KernelContext::semaphore_read(Semaphore sem) {
  check_usable("semaphore_read");
  return cell(sem, position_, "semaphore_read").value();
}

int64_t KernelContext::semaphore_read(DmaSemaphore sem) {
  check_usable("semaphore_read");
  return cell(sem, position_, "semaphore_read").value();
}

Semaphore KernelContext::barrier_semaphore() {
  check_usable("barrier_semaphore");
  if (!spec_->collective_id()) {
    throw CollectiveIdError("barrier_semaphore: " + who() +
                            " has no collective id (KernelSpec::set_collective_id)");
  }
  return Semaphore(Semaphore::kBarrier);
}

std::byte* KernelContext::bytes_of(const BufferRef& ref, int position, const char* what) const {
  const KernelShard& shard = *group_->shards[position];
  const int b = ref.buffer();
  if (b < 0 || b >= static_cast<int>(shard.buffers.size()) ||
      ref.byte_offset() > shard.buffers[b].nbytes() ||
      ref.nbytes() > shard.buffers[b].nbytes() - ref.byte_offset()) {
    throw InvalidArgumentError(
        std::string(what) + ": " + who() + " has no " + ref.to_string() +
        (b >= 0 && b < static_cast<int>(shard.buffers.size())
             ? " (its buffer " + std::to_string(b) + " has " +
                   std::to_string(shard.buffers[b].nbytes()) + " bytes)"
             : " (its spec declares " + std::to_string(shard.buffers.size()) + " buffers)"));
  }
  return shard.data[b] + ref.byte_offset();
}

std::byte* KernelContext::access(const BufferRef& ref, DType dtype, const char* what) {
  check_usable(what);
  if (ref.dtype() != dtype) {
    throw DTypeError(std::string(what) + ": " + who() + " accesses " + ref.to_string() + " as " +
                     std::string(dtype_name(dtype)));
  }
  return bytes_of(ref, position_, what);
}

Array KernelContext::load(const BufferRef& ref) {
  const std::byte* from = access(ref, ref.dtype(), "load");
  Array out = Array::empty(ref.shape(), ref.dtype());
  if (ref.nbytes() > 0) std::memcpy(out.mutable_bytes(), from, ref.nbytes());
  return out;
}

void KernelContext::store(const BufferRef& ref, const Array& value) {
  std::byte* to = access(ref, ref.dtype(), "store");
  if (value.dtype() != ref.dtype() || value.shape() != ref.shape()) {
    const std::string what = "store: " + who() + " stores " + std::string(dtype_name(value.dtype())) +
                             shape_to_string(value.shape()) + " into " + ref.to_string();
    if (value.dtype() != ref.dtype()) throw DTypeError(what);
    throw CollectiveShapeError(what);
  }
  if (ref.nbytes() > 0) std::memcpy(to, value.bytes(), ref.nbytes());
}

AsyncCopy KernelContext::make_async_remote_copy(const BufferRef& src, const BufferRef& dst,
                                                DmaSemaphore send, DmaSemaphore recv,
                                                DeviceId device) {
  static constexpr const char* kWhat = "make_async_remote_copy";
  check_usable(kWhat);
  int target = 0;
  try {
    target = device.position_in(device_->mesh());
  } catch (Error& e) {
    e.add_context(std::string(kWhat) + ": " + who());
    throw;
  }
  bytes_of(src, position_, kWhat);
  bytes_of(dst, target, kWhat);
  cell(send, position_, kWhat);
  cell(recv, target, kWhat);
  if (src.dtype() != dst.dtype() || src.nbytes() != dst.nbytes()) {
    const std::string what = std::string(kWhat) + ": " + who() + " copies " + src.to_string() +
                             " to " + dst.to_string() + ": they differ in " +
                             (src.dtype() != dst.dtype() ? "dtype" : "size");
    if (src.dtype() != dst.dtype()) throw DTypeError(what);
    throw CollectiveShapeError(what);
  }
  if (src.nbytes() > static_cast<size_t>(kMaxValue)) {
    throw SemaphoreError(std::string(kWhat) + ": " + who() + " copies " + src.to_string() +
                         ", more bytes than a DMA semaphore counts (" + std::to_string(kMaxValue) +
                         "); split the copy");
  }
  return AsyncCopy(*this, generation_, src, dst, send, recv, target);
}

AsyncCopy KernelContext::make_async_copy(const BufferRef& src, const BufferRef& dst,
                                         DmaSemaphore sem) {
  check_usable("make_async_copy");
  AsyncCopy copy = make_async_remote_copy(src, dst, sem, sem, DeviceId(position_));
  copy.local_ = true;
  return copy;
}

void KernelContext::start(const AsyncCopy& copy) {
  const std::byte* from = bytes_of(copy.src_, position_, "AsyncCopy::start");
  std::byte* to = bytes_of(copy.dst_, copy.target_, "AsyncCopy::start");
  const size_t n = copy.src_.nbytes();
  if (n > 0) std::memmove(to, from, n);  // a local copy may overlap
  const auto add = [&](DmaSemaphore sem, int position) {
    SemaphoreCell& c = cell(sem, position, "AsyncCopy::start");
    if (static_cast<int64_t>(c.value()) + static_cast<int64_t>(n) > kMaxValue) {
      throw SemaphoreError("AsyncCopy::start: " + who() + " adds " + std::to_string(n) +
                           " bytes to DMA semaphore " + std::to_string(sem.index()) +
                           " of device " + std::to_string(device_->mesh().device_at(position)) +
                           ", which holds " + std::to_string(c.value()) + ": past the most a " +
                           "semaphore holds, " + std::to_string(kMaxValue));
    }
    if (n > 0) c.signalled.advance(static_cast<uint32_t>(n));
  };
  add(copy.recv_, copy.target_);
  if (!copy.local_) add(copy.send_, position_);
}

void KernelContext::wait_dma(DmaSemaphore sem, size_t bytes, const char* what) {
  if (bytes == 0) return;
  take(*device_, cell(sem, position_, what), static_cast<uint32_t>(bytes), what, "DMA semaphore",
       sem.index());
}

void AsyncCopy::start() {
  kernel_->check_usable("AsyncCopy::start", generation_);
  kernel_->start(*this);
}

void AsyncCopy::wait_send() {
  kernel_->check_usable("AsyncCopy::wait_send", generation_);
  if (local_) {
    throw RuntimeUsageError("AsyncCopy::wait_send: " + kernel_->who() +
                            ": a local copy (make_async_copy) has one semaphore; call wait()");
  }
  kernel_->wait_dma(send_, src_.nbytes(), "AsyncCopy::wait_send");
}

void AsyncCopy::wait_recv() {
  kernel_->check_usable("AsyncCopy::wait_recv", generation_);
  kernel_->wait_dma(recv_, dst_.nbytes(), "AsyncCopy::wait_recv");
}

}  // namespace meshsim
