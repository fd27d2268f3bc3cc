#include "meshsim/runtime/kernel/kernel_context.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/time/internal/launch_time.h"
#include "meshsim/runtime/kernel/internal/kernel_programs.h"
#include "meshsim/runtime/kernel/internal/kernel_shard.h"
#include "meshsim/runtime/kernel/internal/pending_units.h"

namespace meshsim {
namespace {

constexpr int64_t kMaxValue = KernelContext::kMaxSemaphoreValue;

// Marks a wait for a semaphore's count, for deadlock and timeout reports
// (WaitNote), restoring what the device was marked with before.
class SemaphoreWaitScope {
 public:
  // Sleeping on `word`: the semaphore's own (`holds` < 0), or another whose
  // change wakes the device whenever the semaphore's value `holds` may change.
  SemaphoreWaitScope(DeviceState& device, const char* op, const WaitWord& word, const char* kind,
                     int index, uint32_t consumed, int64_t target, int64_t holds = -1)
      : device_(device), outer_op_(device.current_op.load(std::memory_order_relaxed)) {
    WaitNote& note = device.wait_note;
    note.kind.store(kind, std::memory_order_relaxed);
    note.index.store(index, std::memory_order_relaxed);
    note.target.store(target, std::memory_order_relaxed);
    note.consumed.store(consumed, std::memory_order_relaxed);
    note.holds.store(holds, std::memory_order_relaxed);
    note.word.store(&word, std::memory_order_release);
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

const char* kind_of(Semaphore sem) { return sem.is_barrier() ? "barrier semaphore" : "semaphore"; }
std::string sem_name(Semaphore sem) {
  return sem.is_barrier() ? "the barrier semaphore" : "semaphore " + std::to_string(sem.index());
}

// What a copy's send signal carries: its completion costs its issuer
// nothing past the departure (the receiver's wait pays the transfer).
SignalStamp send_stamp(const InFlightCopy& f) {
  return {f.stamp.source, f.stamp.device, f.stamp.departure, 0, 0};
}

}  // namespace

KernelContext::~KernelContext() = default;

std::string KernelContext::prefix(const char* what) const {
  std::string out = what;  // appended, not concatenated: g++ 12 warns falsely on the latter
  out += ": ";
  out += who();
  return out;
}

std::string KernelContext::who() const {
  return "kernel '" + name_ + "' on device " + std::to_string(DeviceHooks::device(*device_).id);
}

void KernelContext::check_usable(const char* what) const {
  DeviceHooks::check_usable(*device_, what);
  // Once the device settled (a cancelled wait, or its own failure), peers
  // may free their buffers: a body that caught the error must not go on. A
  // body that polls (semaphore_read, buffer reads) and never waits stops
  // here too once the launch failed or timed out.
  DeviceState& device = DeviceHooks::device(*device_);
  if (device.waiter.cancel_if_aborted()) {
    throw CancelledError(prefix(what) + ": the launch failed and was cancelled");
  }
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

int KernelContext::program() const {
  check_usable("KernelContext::program");
  return program_;
}

int KernelContext::num_programs() const {
  check_usable("KernelContext::num_programs");
  return static_cast<int>(programs_->programs.size());
}

const Mesh& KernelContext::program_mesh() const {
  check_usable("KernelContext::program_mesh");
  return *programs_->programs[program_].mesh;
}

int KernelContext::program_device_id() const {
  check_usable("KernelContext::program_device_id");
  return position_ - programs_->programs[program_].offset;
}

int KernelContext::axis_index(std::string_view axis) const {
  check_usable("KernelContext::axis_index");
  const KernelProgram& program = programs_->programs[program_];
  int axis_position = 0;
  try {
    axis_position = program.mesh->abstract_mesh().axis_position(axis);
  } catch (const UnknownAxisError& e) {
    std::string message = prefix("KernelContext::axis_index");  // appended: see prefix()
    message += ": ";
    message += e.message();
    throw UnknownAxisError(message);
  }
  // By position: a device with several functions is in the mesh once per core.
  return program.mesh->abstract_mesh().coords(position_ - program.offset)[axis_position];
}

int KernelContext::logical_id(int program, const DeviceId& device) const {
  check_usable("KernelContext::logical_id");
  const int programs = static_cast<int>(programs_->programs.size());
  if (program < 0 || program >= programs) {
    throw InvalidArgumentError(prefix("KernelContext::logical_id") + ": program " +
                               std::to_string(program) + " is outside [0, " +
                               std::to_string(programs) + ")");
  }
  try {
    return programs_->programs[program].launch_position(device);
  } catch (Error& e) {
    e.add_context(prefix("KernelContext::logical_id") + ": program " + std::to_string(program));
    throw;
  }
}

int KernelContext::target_of(const DeviceId& device, const char* what) const {
  try {
    if (!device.by_coords()) return device.position_in(device_->mesh());
    return programs_->programs[program_].launch_position(device);
  } catch (Error& e) {
    e.add_context(prefix(what));
    throw;
  }
}

int KernelContext::cell(Semaphore sem, const char* what) const {
  if (sem.is_barrier()) {
    if (!has_collective_id_) {
      throw CollectiveIdError(prefix(what) +
                              " uses a barrier semaphore but has no collective id "
                              "(KernelSpec::set_collective_id)");
    }
    return shard_->barrier_cell();
  }
  if (sem.index() < 0 || sem.index() >= shard_->regular) {
    throw InvalidArgumentError(prefix(what) + " has no semaphore " +
                               std::to_string(sem.index()) + " (its spec declares " +
                               std::to_string(shard_->regular) + ")");
  }
  return shard_->regular_cell(sem.index());
}

int KernelContext::cell(DmaSemaphore sem, const char* what) const {
  if (sem.index() < 0 || sem.index() >= shard_->dma) {
    throw InvalidArgumentError(prefix(what) + " has no DMA semaphore " +
                               std::to_string(sem.index()) + " (its spec declares " +
                               std::to_string(shard_->dma) + ")");
  }
  return shard_->dma_cell(sem.index());
}

void KernelContext::check_room(int position, int index, uint32_t units, const char* what) const {
  const KernelShard& target = *group_->shards[position];
  const int64_t before = target.cells[index].value();
  if (before + static_cast<int64_t>(units) > kMaxValue) {
    throw SemaphoreError(prefix(what) + " adds " + std::to_string(units) +
                         " to " + target.cell_name(index) + " of device " +
                         std::to_string(programs_->device_at(position)) + ", which holds " +
                         std::to_string(before) + ": past the most a semaphore holds, " +
                         std::to_string(kMaxValue));
  }
}

void KernelContext::signal(int position, int index, uint32_t units, const VectorClock* clock,
                           const SignalStamp* stamp, const char* what) {
  KernelShard& target = *group_->shards[position];
  SemaphoreCell& c = target.cells[index];
  check_room(position, index, units, what);
  if (group_->races) group_->races->signal(*target.races, index, units, *clock);
  if (stamp != nullptr && target.stamps != nullptr) {
    std::lock_guard lock(target.stamps->mu);
    target.stamps->pending[static_cast<size_t>(index)].push_back({units, *stamp, 0});
  }
  // Checked again after adding: signallers that passed the check above at
  // once may together pass the limit (one of them then fails).
  const uint32_t after =
      WaitNote::held(c.signalled.advance(units), c.consumed.load(std::memory_order_acquire));
  if (after > kMaxValue) {
    throw SemaphoreError(prefix(what) + " added " + std::to_string(units) + " to " +
                         target.cell_name(index) + " of device " +
                         std::to_string(programs_->device_at(position)) +
                         " while others signalled it: it passed the most a semaphore holds, " +
                         std::to_string(kMaxValue));
  }
}

void KernelContext::take(int index, uint32_t units, const char* op, const char* kind,
                         int number) {
  TraceScope trace(*device_, TraceKind::kTransfer, op, *meeting_);
  SemaphoreCell& c = shard_->cells[index];
  uint32_t consumed = c.consumed.load(std::memory_order_acquire);
  for (;;) {
    const auto enough = [consumed, units](uint32_t value) {
      return WaitNote::held(value, consumed) >= units;
    };
    if (!enough(c.signalled.load())) {
      SemaphoreWaitScope scope(DeviceHooks::device(*device_), op, c.signalled, kind, number,
                               consumed, units);
      DeviceHooks::waiter(*device_).wait(c.signalled, enough);
    }
    if (try_take(index, consumed, units, trace.event())) return;
  }
}

bool KernelContext::try_take(int index, uint32_t& consumed, uint32_t units, RawTraceEvent* event) {
  std::unique_lock order(shard_->take_mu, std::defer_lock);
  if (!programs_->shard_owner.empty()) order.lock();
  if (!shard_->cells[index].consumed.compare_exchange_weak(
          consumed, consumed + units, std::memory_order_acq_rel, std::memory_order_acquire)) {
    return false;
  }
  took(index, units, event);
  return true;
}

void KernelContext::took(int index, uint32_t units, RawTraceEvent* event) {
  if (group_->races) group_->races->take(*shard_->races, index, units, agent_->clocks->device);
  if (shard_->stamps == nullptr) return;
  const DeviceState& me = DeviceHooks::device(*device_);
  const auto core_bit = static_cast<uint8_t>(1u << me.core);
  std::vector<SignalStamp> fresh;  // the signals no wait of this function took part of before
  {
    std::lock_guard lock(shard_->stamps->mu);
    take_oldest(shard_->stamps->pending[static_cast<size_t>(index)], units,
                [&](ShardStamps::Pending& signal) {
                  if ((signal.priced_by & core_bit) == 0) fresh.push_back(signal.stamp);
                  signal.priced_by |= core_bit;
                });
  }
  DeviceClock& clock = DeviceHooks::clock(*device_);
  for (const SignalStamp& s : fresh) {
    if (clock.on()) {
      const double bandwidth = clock.time->device().memory_bandwidth;
      if (s.device != me.id) {
        clock.receive(s.source, me.agent, s.bytes, s.departure);
      } else if (s.source != me.agent) {
        // From another function on this device: no network; a copy moves
        // within its memory, at the memory bandwidth (free without one).
        clock.receive_local(
            me.id, s.source, s.departure,
            s.bytes > 0 && bandwidth > 0 ? static_cast<double>(s.bytes) / bandwidth : 0);
      } else if (s.bytes > 0 && bandwidth > 0) {
        // A copy within its memory, at the device's memory bandwidth. (Its
        // own signal, or such a copy with no bandwidth given, departed at a
        // reading its clock has passed: nothing to join, no step to log.)
        clock.join_after(me.id, s.departure, static_cast<double>(s.bytes) / bandwidth);
      }
    }
    if (event != nullptr && s.source != me.agent) {
      event->from = s.device;
      event->flow_in = s.flow;
      event->recv_bytes += s.bytes;
    }
  }
}

SignalStamp KernelContext::stamp_now(int64_t bytes, RawTraceEvent* sent) {
  const std::optional<LinkStamp> link = DeviceHooks::stamp(*device_, sent);
  const DeviceState& me = DeviceHooks::device(*device_);
  return {me.agent, me.id, link ? link->departure : 0.0, bytes, link ? link->flow : 0};
}

void KernelContext::semaphore_signal(Semaphore sem, int64_t inc) {
  check_usable("semaphore_signal");
  semaphore_signal(sem, inc, DeviceId(position_));
}

void KernelContext::semaphore_signal(Semaphore sem, int64_t inc, DeviceId device) {
  check_usable("semaphore_signal");
  if (inc < 1 || inc > kMaxValue) {
    throw InvalidArgumentError(prefix("semaphore_signal") + " signals " + sem_name(sem) + " by " +
                               std::to_string(inc) +
                               "; an increment must be in [1, " + std::to_string(kMaxValue) + "]");
  }
  const int target = target_of(device, "semaphore_signal");
  const int index = cell(sem, "semaphore_signal");
  TraceScope trace(*device_, TraceKind::kTransfer, "semaphore_signal", *meeting_);
  if (RawTraceEvent* e = trace.event()) e->to = programs_->device_at(target);
  const VectorClock* clock = group_->races ? &agent_->clocks->device : nullptr;
  const SignalStamp stamp = stamp_now(0, target != position_ ? trace.event() : nullptr);
  signal(target, index, static_cast<uint32_t>(inc), clock, &stamp, "semaphore_signal");
}

void KernelContext::semaphore_wait(Semaphore sem, int64_t value) {
  check_usable("semaphore_wait");
  if (value < 1 || value > kMaxValue) {
    throw InvalidArgumentError(prefix("semaphore_wait") + " waits for " + sem_name(sem) +
                               " to reach " + std::to_string(value) +
                               "; the value must be in [1, " + std::to_string(kMaxValue) + "]");
  }
  take(cell(sem, "semaphore_wait"), static_cast<uint32_t>(value), "semaphore_wait", kind_of(sem),
       sem.is_barrier() ? -1 : sem.index());
}

int64_t KernelContext::semaphore_read(Semaphore sem) {
  check_usable("semaphore_read");
  return shard_->cells[cell(sem, "semaphore_read")].value();
}

int64_t KernelContext::semaphore_read(DmaSemaphore sem) {
  check_usable("semaphore_read");
  return shard_->cells[cell(sem, "semaphore_read")].value();
}

Semaphore KernelContext::barrier_semaphore() {
  check_usable("barrier_semaphore");
  if (!has_collective_id_) {
    throw CollectiveIdError(prefix("barrier_semaphore") +
                            " has no collective id (KernelSpec::set_collective_id)");
  }
  return Semaphore(Semaphore::kBarrier);
}

namespace {

// Whether `ref` can be a region of a buffer declared as `declared`: the
// same dtype, and a shape and place that at() (drops leading dims) and
// slice() (fewer rows of the leading dim, within one block of them) can make
// of the declared one. A ref of another KernelSpec's buffer with the same
// index fails this unless laid out alike.
bool fits_declaration(const BufferRef& ref, const Array& declared) {
  if (ref.dtype() != declared.dtype()) return false;
  const Shape& r = ref.shape();
  const Shape& d = declared.shape();
  const size_t esize = dtype_size(ref.dtype());
  if (r.size() > d.size()) return false;
  if (r.empty()) return ref.byte_offset() % esize == 0;
  const size_t lead = d.size() - r.size();
  if (r[0] > d[lead] || !std::equal(r.begin() + 1, r.end(), d.begin() + lead + 1)) return false;
  // Bytes per row of the leading dim, and per block of its d[lead] rows.
  size_t row = esize;
  for (size_t k = lead + 1; k < d.size(); ++k) row *= static_cast<size_t>(d[k]);
  const size_t block = row * static_cast<size_t>(d[lead]);
  if (block == 0) return true;  // no bytes to address
  const size_t offset = ref.byte_offset();
  return offset % row == 0 && offset % block / row + static_cast<size_t>(r[0]) <= block / row;
}

}  // namespace

std::byte* KernelContext::bytes_of(const BufferRef& ref, int position, const char* what) const {
  const KernelShard& shard = *group_->shards[position];
  const int b = ref.buffer();
  if (b >= 0 && b < static_cast<int>(shard.buffers.size()) &&
      !fits_declaration(ref, shard.buffers[b])) {
    const Array& declared = shard.buffers[b];
    const std::string message = prefix(what) + " has no " + ref.to_string() + ": its buffer " +
                                std::to_string(b) + " is " +
                                std::string(dtype_name(declared.dtype())) +
                                shape_to_string(declared.shape()) +
                                " (a BufferRef of another KernelSpec?)";
    if (ref.dtype() != declared.dtype()) throw DTypeError(message);
    throw ShapeError(message);
  }
  if (b < 0 || b >= static_cast<int>(shard.buffers.size()) ||
      ref.byte_offset() > shard.buffers[b].nbytes() ||
      ref.nbytes() > shard.buffers[b].nbytes() - ref.byte_offset()) {
    throw InvalidArgumentError(
        prefix(what) + " has no " + ref.to_string() +
        (b >= 0 && b < static_cast<int>(shard.buffers.size())
             ? " (its buffer " + std::to_string(b) + " has " +
                   std::to_string(shard.buffers[b].nbytes()) + " bytes)"
             : " (its spec declares " + std::to_string(shard.buffers.size()) + " buffers)"));
  }
  return shard.data[b] + ref.byte_offset();
}

std::byte* KernelContext::access(const BufferRef& ref, DType dtype, const char* what, bool write) {
  check_usable(what);
  if (ref.dtype() != dtype) {
    throw DTypeError(prefix(what) + " accesses " + ref.to_string() + " as " +
                     std::string(dtype_name(dtype)));
  }
  std::byte* bytes = bytes_of(ref, position_, what);
  if (const RaceDetector* races = group_->races.get()) {
    VectorClock& clock = agent_->clocks->device;
    const int actor = races->device_actor(position_);
    clock.tick(actor);
    races->access(*shard_->races, position_, ref.buffer(), ref.byte_offset(),
                  ref.byte_offset() + ref.nbytes(), write, actor, clock, what);
  }
  return bytes;
}

Array KernelContext::load(const BufferRef& ref) {
  const std::byte* from = access(ref, ref.dtype(), "load", false);
  Array out = Array::empty(ref.shape(), ref.dtype());
  if (ref.nbytes() > 0) std::memcpy(out.mutable_bytes(), from, ref.nbytes());
  return out;
}

void KernelContext::store(const BufferRef& ref, const Array& value) {
  std::byte* to = access(ref, ref.dtype(), "store", true);
  if (value.dtype() != ref.dtype() || value.shape() != ref.shape()) {
    const std::string what = prefix("store") + " stores " + std::string(dtype_name(value.dtype())) +
                             shape_to_string(value.shape()) + " into " + ref.to_string();
    if (value.dtype() != ref.dtype()) throw DTypeError(what);
    throw CollectiveShapeError(what);
  }
  if (ref.nbytes() > 0) std::memcpy(to, value.bytes(), ref.nbytes());
}

AsyncCopy KernelContext::make_async_remote_copy(const BufferRef& src, const BufferRef& dst,
                                                DmaSemaphore send, DmaSemaphore recv,
                                                DeviceId device) {
  return make_copy("make_async_remote_copy", src, dst, send, recv, device);
}

AsyncCopy KernelContext::make_copy(const char* kWhat, const BufferRef& src, const BufferRef& dst,
                                   DmaSemaphore send, DmaSemaphore recv, DeviceId device) {
  check_usable(kWhat);
  const int target = target_of(device, kWhat);
  bytes_of(src, position_, kWhat);
  bytes_of(dst, target, kWhat);
  cell(send, kWhat);
  cell(recv, kWhat);
  if (src.dtype() != dst.dtype() || src.nbytes() != dst.nbytes()) {
    const std::string what = prefix(kWhat) + " copies " + src.to_string() +
                             " to " + dst.to_string() + ": they differ in " +
                             (src.dtype() != dst.dtype() ? "dtype" : "size");
    if (src.dtype() != dst.dtype()) throw DTypeError(what);
    throw CollectiveShapeError(what);
  }
  if (src.nbytes() > static_cast<size_t>(kMaxValue)) {
    throw SemaphoreError(prefix(kWhat) + " copies " + src.to_string() +
                         ", more bytes than a DMA semaphore counts (" + std::to_string(kMaxValue) +
                         "); split the copy");
  }
  return AsyncCopy(*this, generation_, src, dst, send, recv, target);
}

AsyncCopy KernelContext::make_async_copy(const BufferRef& src, const BufferRef& dst,
                                         DmaSemaphore sem) {
  check_usable("make_async_copy");
  AsyncCopy copy = make_copy("make_async_copy", src, dst, sem, sem, DeviceId(position_));
  copy.local_ = true;
  return copy;
}

void KernelContext::start(const AsyncCopy& copy) {
  static constexpr const char* kWhat = "AsyncCopy::start";
  TraceScope trace(*device_, TraceKind::kTransfer, kWhat, *meeting_);
  auto flight = std::make_shared<InFlightCopy>();
  InFlightCopy& f = *flight;
  f.from = bytes_of(copy.src_, position_, kWhat);
  f.to = bytes_of(copy.dst_, copy.target_, kWhat);
  f.bytes = copy.src_.nbytes();
  f.issuer = position_;
  f.target = copy.target_;
  f.send_cell = cell(copy.send_, kWhat);
  f.signals_send = !copy.local_;
  f.recv_cell = cell(copy.recv_, kWhat);
  if (RawTraceEvent* e = trace.event()) {
    e->to = programs_->device_at(f.target);
    e->bytes = static_cast<int64_t>(f.bytes);
  }
  if (shard_->stamps != nullptr) {
    f.stamp = stamp_now(static_cast<int64_t>(f.bytes),
                        f.target != position_ ? trace.event() : nullptr);
  }
  if (const RaceDetector* races = group_->races.get()) {
    // The copy's read and write come after everything the device did so
    // far, and before nothing it does next until it waits for them. Its
    // write comes after its read (a DMA reads before it writes), so waiting
    // for its receive orders both; its send orders the read only.
    ActorClocks& own = *agent_->clocks;
    const int reader = races->reader_actor(position_);
    own.reader.join(own.device);
    own.reader.tick(reader);
    races->access(*shard_->races, position_, copy.src_.buffer(), copy.src_.byte_offset(),
                  copy.src_.byte_offset() + f.bytes, false, reader, own.reader, "DMA read");
    own.writer.join(own.device);
    own.writer.tick(races->writer_actor(position_));
    races->access(*group_->shards[f.target]->races, f.target, copy.dst_.buffer(),
                  copy.dst_.byte_offset(), copy.dst_.byte_offset() + f.bytes, true,
                  races->writer_actor(position_), own.writer, "DMA write",
                  {reader, own.reader[reader]});
    f.send_clock = own.reader;
    f.recv_clock = own.writer;
    f.recv_clock.join(own.reader);
  }
  if (copy_mode_ == CopyMode::kEager) {
    // A copy its semaphores cannot count is refused before its bytes move.
    const auto units = static_cast<uint32_t>(f.bytes);
    check_room(f.target, f.recv_cell, units, "AsyncCopy");
    if (f.signals_send) check_room(f.issuer, f.send_cell, units, "AsyncCopy");
    if (f.bytes > 0) std::memmove(f.to, f.from, f.bytes);  // a local copy may overlap
    signal_done(f);
    return;
  }
  KernelShard& target = *group_->shards[f.target];
  {
    std::lock_guard lock(target.inbox_mu);
    target.inbox.push_back(flight);
  }
  target.inbox_posted.advance();
  agent_->started.push_back(std::move(flight));
  if (copy_mode_ == CopyMode::kRandom) advance_at_random();
}

void KernelContext::signal_done(const InFlightCopy& f) {
  if (f.bytes == 0) return;
  const bool races = group_->races != nullptr;
  const uint32_t units = static_cast<uint32_t>(f.bytes);
  signal(f.target, f.recv_cell, units, races ? &f.recv_clock : nullptr, &f.stamp, "AsyncCopy");
  if (f.signals_send) {
    const SignalStamp sent = send_stamp(f);
    signal(f.issuer, f.send_cell, units, races ? &f.send_clock : nullptr, &sent, "AsyncCopy");
  }
}

void KernelContext::read_source(InFlightCopy& f) {
  std::lock_guard lock(f.mu);
  if (f.read) return;
  f.staging.assign(f.from, f.from + f.bytes);
  f.read = true;
  if (f.bytes > 0 && f.signals_send) {
    const SignalStamp sent = send_stamp(f);
    signal(f.issuer, f.send_cell, static_cast<uint32_t>(f.bytes),
           group_->races ? &f.send_clock : nullptr, &sent, "AsyncCopy");
  }
}

void KernelContext::write_destination(InFlightCopy& f) {
  read_source(f);
  bool wrote = false;
  {
    std::lock_guard lock(f.mu);
    if (f.written) return;
    if (f.bytes > 0) std::memcpy(f.to, f.staging.data(), f.bytes);
    f.staging = {};
    f.written = wrote = true;
    if (f.bytes > 0) {
      signal(f.target, f.recv_cell, static_cast<uint32_t>(f.bytes),
             group_->races ? &f.recv_clock : nullptr, &f.stamp, "AsyncCopy");
    }
  }
  // A receiver asleep until its copies arrive rechecks (this device's other
  // functions too: a copy to this device may be what one of them waits for).
  if (wrote && (f.target != position_ || !programs_->shard_owner.empty())) {
    group_->shards[f.target]->inbox_posted.advance();
  }
}

// Whether `f` has been read / written (under its lock: another device may
// run its phases).
static bool is_read(InFlightCopy& f) {
  std::lock_guard lock(f.mu);
  return f.read;
}
static bool is_written(InFlightCopy& f) {
  std::lock_guard lock(f.mu);
  return f.written;
}

void KernelContext::read_started(int send_cell) {
  std::vector<std::shared_ptr<InFlightCopy>>& started = agent_->started;
  // Sources may be read in any order (kRandom draws one); `started` keeps
  // the start order.
  std::vector<size_t> order(started.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  if (copy_mode_ == CopyMode::kRandom) std::shuffle(order.begin(), order.end(), agent_->rng);
  for (size_t i : order) {
    if (send_cell < 0 || started[i]->send_cell == send_cell) read_source(*started[i]);
  }
  std::erase_if(started, [](const auto& f) { return is_written(*f); });
}

void KernelContext::write_arrived(int recv_cell) {
  while (write_one_arrived(recv_cell)) {
  }
}

bool KernelContext::land_next(KernelShard& target, int recv_cell, int issuer) {
  // Under the inbox's lock from choosing to signalling: copies from one
  // device to one semaphore land in the order they were started (as the
  // seed's kernel relies on), which two devices landing copies of one
  // channel at once (its receiver waiting, its issuer in kRandom) would
  // otherwise break; among several channels kRandom draws which lands next.
  std::lock_guard lock(target.inbox_mu);
  std::vector<size_t> heads;
  std::vector<int> issuers;
  for (size_t i = 0; i < target.inbox.size(); ++i) {
    const InFlightCopy& f = *target.inbox[i];
    if ((recv_cell >= 0 && f.recv_cell != recv_cell) || (issuer >= 0 && f.issuer != issuer)) {
      continue;
    }
    if (std::find(issuers.begin(), issuers.end(), f.issuer) != issuers.end()) continue;
    issuers.push_back(f.issuer);
    heads.push_back(i);
  }
  if (heads.empty()) return false;
  size_t pick = heads.front();
  if (copy_mode_ == CopyMode::kRandom) {
    pick = heads[static_cast<size_t>(agent_->rng() % heads.size())];
  }
  const std::shared_ptr<InFlightCopy> next = std::move(target.inbox[pick]);
  target.inbox.erase(target.inbox.begin() + static_cast<std::ptrdiff_t>(pick));
  write_destination(*next);
  return true;
}

bool KernelContext::write_one_arrived(int recv_cell) { return land_next(*shard_, recv_cell, -1); }

void KernelContext::advance_at_random() {
  // Each step, with probability 1/2, moves a drawn copy this device started
  // one phase on (a read copy: the oldest of its channel lands), so some
  // copies land early, at points the seed fixes.
  std::vector<std::shared_ptr<InFlightCopy>>& started = agent_->started;
  std::mt19937_64& rng = agent_->rng;
  while (!started.empty() && (rng() & 1) != 0) {
    InFlightCopy& f = *started[static_cast<size_t>(rng() % started.size())];
    if (!is_read(f)) {
      read_source(f);
      continue;
    }
    land_next(*group_->shards[f.target], f.recv_cell, position_);
    std::erase_if(started, [](const auto& c) { return is_written(*c); });
  }
}

void KernelContext::wait_dma(DmaSemaphore sem, size_t bytes, bool receive, const char* what) {
  const int index = cell(sem, what);
  if (copy_mode_ != CopyMode::kEager) {
    if (!receive) {
      read_started(index);
    } else {
      wait_for_arrivals(index, bytes, what, sem.index());
      return;
    }
  }
  if (bytes == 0) return;
  take(index, static_cast<uint32_t>(bytes), what, "DMA semaphore", sem.index());
}

void KernelContext::wait_for_arrivals(int index, size_t bytes, const char* what, int number) {
  // The copies to this device land when it waits for them: it writes those
  // that have come for this semaphore until it holds enough, and sleeps
  // until another comes.
  TraceScope trace(*device_, TraceKind::kTransfer, what, *meeting_);
  SemaphoreCell& c = shard_->cells[index];
  const uint32_t units = static_cast<uint32_t>(bytes);
  uint32_t consumed = c.consumed.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t seen = shard_->inbox_posted.load();
    // One copy at a time, until the semaphore holds enough: the others stay
    // in flight, as late as a correct kernel allows.
    uint32_t holds = WaitNote::held(c.signalled.load(), consumed);
    while (holds < units && write_one_arrived(index)) {
      holds = WaitNote::held(c.signalled.load(), consumed);
    }
    if (holds >= units) {
      if (try_take(index, consumed, units, trace.event())) return;
      continue;
    }
    SemaphoreWaitScope scope(DeviceHooks::device(*device_), what, shard_->inbox_posted,
                             "DMA semaphore", number, consumed, units, holds);
    DeviceHooks::waiter(*device_).wait_change(shard_->inbox_posted, seen);
    consumed = c.consumed.load(std::memory_order_acquire);
  }
}

void KernelContext::finish_reads() { read_started(-1); }

void KernelContext::finish_writes() { write_arrived(-1); }

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
  kernel_->wait_dma(send_, src_.nbytes(), false, "AsyncCopy::wait_send");
}

void AsyncCopy::wait() {
  if (!local_) wait_send();
  wait_recv();
}

void AsyncCopy::wait_recv() {
  kernel_->check_usable("AsyncCopy::wait_recv", generation_);
  kernel_->wait_dma(recv_, dst_.nbytes(), true, "AsyncCopy::wait_recv");
}

}  // namespace meshsim
