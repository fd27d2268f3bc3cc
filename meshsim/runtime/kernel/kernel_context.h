#pragma once
// KernelContext: what a device's kernel code receives (run_kernel.h,
// mpmd_map.h) — its
// symmetric buffers, its semaphores and its peers' — and AsyncCopy, a DMA
// between buffers. Names follow Pallas TPU (pltpu.semaphore_signal,
// make_async_remote_copy, ...); problems are errors, never prints.
//
// Usable only by the device's own code inside the kernel body it was given
// to; a call from elsewhere throws RuntimeUsageError naming the call and
// the device, one after the kernel returned names the kernel too. (A
// call from another thread cannot read the kernel's name: the device may be
// starting its next kernel with this object meanwhile.) The object lives as
// long as the Runtime, one per device and nesting depth, so a kept reference
// fails cleanly — until the device's next kernel at the same depth starts:
// it then serves that kernel (an AsyncCopy made in an earlier kernel still
// fails). Once the launch failed, every call throws CancelledError, also in
// a body that caught an error and goes on. Spans from read() and write()
// are valid until the kernel returns.
//
// Waits (semaphore_wait, AsyncCopy::wait_*) block like meshsim's
// collectives: another device's failure cancels them, and a kernel whose
// waits can never complete fails with a DeadlockError that names, per
// device, the semaphore it waits on, the value it waits for and the value it
// holds.
//
// Copies run as the spec's CopyMode says: eagerly by default (start() moves
// the bytes and signals both semaphores before it returns), or when their
// device next waits, in program or seeded random order. Counting is exact,
// so a kernel that waits for what it did not copy, or never waits for what
// it did, fails as it would on a TPU (a deadlock; a semaphore left non-zero
// when the kernel exits). With race detection on, every access below is
// checked (DataRaceError; KernelSpec::set_race_detection).

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/kernel/device_id.h"
#include "meshsim/runtime/kernel/kernel_spec.h"

namespace meshsim {

class KernelContext;
struct GroupRef;
struct KernelGroup;
struct KernelAgent;
struct KernelShard;
class KernelWords;
struct KernelPrograms;
struct InFlightCopy;
struct RawTraceEvent;
struct SignalStamp;
class VectorClock;

// One DMA from `src` on this device to `dst` on a device of the kernel
// (itself, for a local copy). A descriptor: start() may be called again for
// another copy of the same bytes; the device that receives waits with its
// own descriptor for the same `dst` (Pallas does the same).
class AsyncCopy {
 public:
  // Starts the copy. Eager: moves the bytes, then adds their count to the
  // receive semaphore on the destination device and to the send semaphore
  // here (a local copy: to its one semaphore, once). Other copy modes: the
  // same later, when the copy is waited for (KernelSpec::set_copy_mode).
  // SemaphoreError when a semaphore would pass kMaxSemaphoreValue; eager,
  // before any byte moves.
  void start();
  // Waits until the send semaphore here holds src's byte count, and takes
  // it. RuntimeUsageError for a local copy, which has no send semaphore.
  void wait_send();
  // Waits until the receive semaphore here holds dst's byte count, and takes
  // it (called on the device the copy wrote to).
  void wait_recv();
  // Pallas's wait(): a remote copy's wait_send() then wait_recv(); a local
  // copy's one semaphore.
  void wait();

 private:
  friend class KernelContext;
  AsyncCopy(KernelContext& kernel, uint64_t generation, const BufferRef& src, const BufferRef& dst,
            DmaSemaphore send, DmaSemaphore recv, int target)
      : kernel_(&kernel), generation_(generation), src_(src), dst_(dst),
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
  ~KernelContext();

  // The device's context in the enclosing launch (axis_index and the like;
  // in mpmd_map the launch's mesh has the one axis kMpmdAxis).
  DeviceContext& device();
  // This device's logical id (its position in the launch's mesh) and the
  // device count.
  int device_id() const;
  int num_devices() const;
  const std::string& name() const;

  // The program this device runs: its index in mpmd_map's list, that
  // program's mesh and this device's position in it, and how many programs
  // the kernel has (run_kernel: program 0 of 1, on the launch's mesh, at
  // device_id()).
  int program() const;
  int num_programs() const;
  const Mesh& program_mesh() const;
  int program_device_id() const;
  // This device's index along `axis` of its program's mesh
  // (UnknownAxisError if that mesh has no such axis).
  int axis_index(std::string_view axis) const;
  // The logical id of the device `device` names in program `program`'s mesh
  // (a logical id there is a position in that mesh): what a copy or a
  // signal to another program's device takes. InvalidArgumentError for a
  // program out of range; DeviceIdError as for any id.
  int logical_id(int program, const DeviceId& device) const;

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
  // The kernel's barrier semaphore (one per device, at 0 when the kernel
  // starts, like the others). CollectiveIdError if the spec has no
  // collective id.
  Semaphore barrier_semaphore();

  // This device's bytes of `ref`. DTypeError unless T is its dtype;
  // InvalidArgumentError for a region outside the buffers the spec declares.
  template <class T>
  std::span<const T> read(const BufferRef& ref) {
    return {reinterpret_cast<const T*>(access(ref, dtype_of<T>(), "read", false)),
            ref.nbytes() / sizeof(T)};
  }
  template <class T>
  std::span<T> write(const BufferRef& ref) {
    return {reinterpret_cast<T*>(access(ref, dtype_of<T>(), "write", true)),
            ref.nbytes() / sizeof(T)};
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
  AsyncCopy make_copy(const char* what, const BufferRef& src, const BufferRef& dst,
                      DmaSemaphore send, DmaSemaphore recv, DeviceId device);
  friend class AsyncCopy;
  friend struct KernelRun;
  KernelContext() = default;

  // RuntimeUsageError naming `what` unless called by the device's own code
  // inside this kernel (`generation`: the kernel a copy was made in).
  void check_usable(const char* what) const;
  void check_usable(const char* what, uint64_t generation) const;
  // The launch position of the device `device` names (mesh coordinates: in
  // this device's program); errors begin with prefix(what).
  int target_of(const DeviceId& device, const char* what) const;
  // "kernel 'name' on device 3": how messages begin, after `what: `
  // (prefix).
  std::string who() const;
  std::string prefix(const char* what) const;
  // The bytes of `ref` on the device at `position`; InvalidArgumentError if
  // `ref` is not inside a buffer the spec declares.
  std::byte* bytes_of(const BufferRef& ref, int position, const char* what) const;
  // bytes_of here, checked for `dtype` and (race detection) recorded as a
  // read or write named `what`.
  std::byte* access(const BufferRef& ref, DType dtype, const char* what, bool write);
  // The index of `sem`'s cell in each shard; errors for one the spec lacks.
  int cell(Semaphore sem, const char* what) const;
  int cell(DmaSemaphore sem, const char* what) const;
  // Adds `units` to cell `cell` of the device at `position`, with
  // `clock` for race detection and `stamp` for virtual time and traces
  // (each ignored when null or off; SemaphoreError past the most it holds).
  void signal(int position, int cell, uint32_t units, const VectorClock* clock,
              const SignalStamp* stamp, const char* what);
  // SemaphoreError unless cell `cell` of the device at `position` has room
  // for `units` more now (others may still signal it meanwhile).
  void check_room(int position, int cell, uint32_t units, const char* what) const;
  // Waits until this device's cell `cell` holds `units` and takes them
  // (another function on the device may take from the same cell).
  void take(int cell, uint32_t units, const char* op, const char* kind, int index);
  // Takes `units` from cell `cell` if its consumed count is still
  // `consumed`, then took(); else false with `consumed` reloaded (another
  // function on this device took units meanwhile). With functions sharing
  // the device, both under the shard's take_mu.
  bool try_take(int cell, uint32_t& consumed, uint32_t units, RawTraceEvent* event);
  // After a wait took `units` from cell `cell`: joins the race detector's
  // clocks of their signals, and prices each signal a wait takes for the
  // first time (the device's clock joins its arrival), noting the sender
  // in `event` (null: not traced).
  void took(int cell, uint32_t units, RawTraceEvent* event);
  // A signal or copy of `bytes` beginning now (the trace event `sent`, if
  // any, gets its flow).
  SignalStamp stamp_now(int64_t bytes, RawTraceEvent* sent);
  void start(const AsyncCopy& copy);
  // Waits for a copy's send (`receive` false) or receive semaphore.
  void wait_dma(DmaSemaphore sem, size_t bytes, bool receive, const char* what);

  // Copies in flight (CopyMode::kOnWait, kRandom; internal/kernel_shard.h):
  // signals what an eager copy has done.
  void signal_done(const InFlightCopy& copy);
  // The copy's two phases, each run once by whoever needs it first.
  void read_source(InFlightCopy& copy);
  void write_destination(InFlightCopy& copy);
  // Reads the sources of this device's copies that signal send cell
  // `send_cell` (every one for -1).
  void read_started(int send_cell);
  // Writes the copies to this device that signal receive cell `recv_cell`
  // (every one for -1).
  void write_arrived(int recv_cell);
  // Writes one such copy (kOnWait: the oldest; kRandom: the oldest from a
  // drawn issuer); false when there is none.
  bool write_one_arrived(int recv_cell);
  // Lands the next copy in `target`'s inbox for `recv_cell` (from `issuer`;
  // -1: any); false when there is none.
  bool land_next(KernelShard& target, int recv_cell, int issuer);
  // kRandom, after a start: moves a few drawn copies one phase on.
  void advance_at_random();
  // wait_recv when copies land on wait: writes what has arrived, sleeps
  // until more does.
  void wait_for_arrivals(int cell, size_t bytes, const char* what, int number);
  // Before the exit meeting every source is read (its buffers may go once
  // all devices met); after it every copy to this device is written.
  void finish_reads();
  void finish_writes();

  DeviceContext* device_ = nullptr;  // set once: a context serves one device
  // The current kernel's (valid while active_), taken from its spec at
  // entry (a spec changed during the kernel changes nothing):
  CopyMode copy_mode_ = CopyMode::kEager;
  bool has_collective_id_ = false;
  KernelGroup* group_ = nullptr;
  KernelShard* shard_ = nullptr;  // this device's (shared by its mpmd_map functions)
  KernelAgent* agent_ = nullptr;  // this function's own
  int position_ = 0;
  // Both on the stack of the kernel's run: read only while active_ (every
  // use is behind check_usable).
  const KernelPrograms* programs_ = nullptr;
  int program_ = 0;
  const GroupRef* meeting_ = nullptr;  // the kernel's group (for trace events)
  std::string name_;
  // Counts the device's kernels at this nesting depth; active_ while one runs.
  uint64_t generation_ = 0;
  std::atomic<bool> active_{false};
  // The words its kernels wait on (kept: see KernelWords).
  std::unique_ptr<KernelWords> words_;
};

}  // namespace meshsim
