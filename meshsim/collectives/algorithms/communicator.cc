#include "meshsim/collectives/algorithms/communicator.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

#include "meshsim/collectives/algorithms/internal/communicator_state.h"
#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/collectives/internal/reduction.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/array/internal/allocation_limit.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"

namespace meshsim {
namespace {

size_t segment_count(size_t bytes, size_t segment) {
  if (segment == 0 || bytes <= segment) return 1;
  return (bytes + segment - 1) / segment;
}

bool overlaps(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pb = static_cast<const std::byte*>(b);
  return a_bytes > 0 && b_bytes > 0 && pa < pb + b_bytes && pb < pa + a_bytes;
}

}  // namespace

template <class E>
void Communicator::raise(const E& error) const {
  // Before any frame of the algorithm unwinds: a peer may be reading this
  // member's posted buffers (its scratch included) in place right now.
  DeviceHooks::fail_and_settle(*live().ctx, std::make_exception_ptr(error));
  throw error;
}

void CallMemory::vouch(const void* data, size_t bytes) {
  if (data != nullptr && bytes > 0) vouched_.push_back({static_cast<const std::byte*>(data), bytes});
}

bool CallMemory::vouched(const void* data, size_t bytes) const {
  const auto* p = static_cast<const std::byte*>(data);
  for (const Range& r : vouched_) {
    if (p >= r.begin && p <= r.begin + r.bytes && bytes <= static_cast<size_t>(r.begin + r.bytes - p)) {
      return true;
    }
  }
  return false;
}

namespace {

// A block of `bytes` for the call; std::bad_alloc above kMaxAllocationBytes.
std::unique_ptr<std::byte[]> call_block(size_t bytes) {
  if (bytes > kMaxAllocationBytes) throw std::bad_alloc();
  return std::make_unique_for_overwrite<std::byte[]>(bytes);
}

}  // namespace

std::byte* CallMemory::scratch(size_t bytes) {
  std::byte* block = blocks_.emplace_back(call_block(bytes)).get();
  vouch(block, bytes);
  return block;
}

const std::byte* CallMemory::copy(const void* data, size_t bytes) {
  std::byte* block = blocks_.emplace_back(call_block(bytes)).get();
  std::memcpy(block, data, bytes);
  return block;
}

Communicator::Communicator(std::unique_ptr<CommunicatorState> state) : state_(std::move(state)) {}
Communicator::Communicator(Communicator&&) noexcept = default;

CommunicatorState& Communicator::live() const {
  if (state_ == nullptr) throw RuntimeUsageError("a Communicator used after it was moved from");
  return *state_;
}
Communicator::~Communicator() = default;

int Communicator::rank() const { return live().group.rank; }
int Communicator::size() const { return live().group.rendezvous->size(); }
DeviceContext& Communicator::context() { return *live().ctx; }
Collective Communicator::collective() const { return live().collective; }
const std::string& Communicator::group_label() const { return live().group.rendezvous->label(); }
std::span<const std::string> Communicator::axes() const { return live().group.set->axes; }
bool Communicator::has_index_groups() const { return !live().group.set->index_groups.empty(); }

int Communicator::device_id(int rank) const {
  check_rank(rank, "device_id");
  return live().group.rendezvous->device_ids()[rank];
}

void Communicator::check_rank(int rank, const char* what) const {
  if (rank < 0 || rank >= size()) {
    raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() +
                               "'): " + what + " names rank " + std::to_string(rank) +
                               ", outside the group of " + std::to_string(size()) + " (" +
                               live().group.rendezvous->describe() + ")"));
  }
}

std::string Communicator::algorithm_name() const {
  return live().entry != nullptr ? live().entry->info->name : std::string("?");
}

const void* Communicator::peer_args_erased(int rank, const std::type_info& type) const {
  check_rank(rank, "peer_args");
  if (!live().entry->info->reads_peer_args || live().is_subgroup) {
    raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() +
                               "'): peer_args needs AlgorithmInfo::reads_peer_args (the call then "
                               "ends with a departure barrier) and the call's own communicator, "
                               "not a subgroup"));
  }
  if (*live().entry->args_type != type) {
    raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() +
                               "'): peer_args asked for the wrong argument type"));
  }
  return live().group.rendezvous->slot(rank).extra;
}

int64_t Communicator::tunable(std::string_view name) const {
  const RegistryEntry* e = live().entry;
  if (e != nullptr) {
    for (size_t i = 0; i < e->info->tunables.size(); ++i) {
      if (e->info->tunables[i].name == name) return e->tunable_values[i];
    }
  }
  raise(InvalidArgumentError("algorithm '" + algorithm_name() + "' declares no tunable '" +
                             std::string(name) + "'"));
}

Link& Communicator::link_to(int peer) {
  const std::span<const int> ids = live().group.rendezvous->agent_ids();
  return live().group.fabric->link(ids[rank()], ids[peer], Fabric::Lane::kCollective);
}

Link& Communicator::link_from(int peer) {
  const std::span<const int> ids = live().group.rendezvous->agent_ids();
  return live().group.fabric->link(ids[peer], ids[rank()], Fabric::Lane::kCollective);
}

std::byte* Communicator::scratch(size_t bytes) {
  try {
    return live().memory->scratch(bytes);
  } catch (const std::bad_alloc&) {
    raise_out_of_memory("scratch", bytes);
  }
}

const void* Communicator::readable(const void* data, size_t bytes) {
  if (Link::copies_at_post(bytes) || live().memory->vouched(data, bytes)) return data;
  try {
    return live().memory->copy(data, bytes);
  } catch (const std::bad_alloc&) {
    raise_out_of_memory("the copy of a sent buffer", bytes);
  }
}

void Communicator::raise_out_of_memory(const char* what, size_t bytes) const {
  raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() + "'): " +
                             what + " of " + std::to_string(bytes) +
                             " bytes: the allocator could not provide them"));
}

void Communicator::post_segment(Link& link, const void* data, size_t bytes, size_t total,
                                size_t index, std::optional<LinkStamp> stamp) {
  link.post(*live().waiter, data, bytes, total, index, stamp);
  // Inline segments too: the call does not end before its peers took every
  // transfer, so none is left on the link for a later call to mistake.
  live().pending->add(&link);
}

LinkStamp Communicator::take_segment(Link& link, int peer, void* data, size_t bytes, size_t total,
                                     size_t index, const Reduce* reduce) {
  const Link::Descriptor& d = link.next(*live().waiter);
  if (d.total != total || d.index != index || d.bytes != bytes) {
    // Not released: the sender stays blocked until the launch aborts. Both
    // sides cut a transfer the same way, so a different total shows on its
    // first segment, before anything of it is read.
    raise(CollectiveShapeError(
        std::string(live().op) + " (algorithm '" + algorithm_name() + "'): device " +
        std::to_string(device_id(rank())) + " expected a transfer of " + std::to_string(total) +
        " bytes from device " + std::to_string(device_id(peer)) + ", which sent " +
        std::to_string(d.total) + " bytes" +
        (d.total == total ? " (segment " + std::to_string(d.index) + " where " +
                                std::to_string(index) + " was expected)"
                          : std::string())));
  }
  if (bytes > 0) {
    if (reduce != nullptr) {
      const auto* in = d.data;
      reduce_into(reduce->op, reduce->dtype, 2,
                  [&](int i) { return i == 0 ? static_cast<const void*>(data) : in; }, data,
                  static_cast<int64_t>(bytes / dtype_size(reduce->dtype)));
    } else {
      std::memcpy(data, d.data, bytes);
    }
  }
  const LinkStamp stamp = DeviceHooks::stamped(*live().ctx) ? link.stamp() : LinkStamp{};
  link.release();
  return stamp;
}

void Communicator::arrive(int peer, size_t bytes, double departure) {
  DeviceClock& clock = DeviceHooks::clock(*live().ctx);
  if (!clock.on()) return;
  try {
    const std::span<const int> agents = live().group.rendezvous->agent_ids();
    clock.receive(agents[peer], agents[rank()], static_cast<int64_t>(bytes), departure);
  } catch (...) {
    // A user's model threw: peers may still read this member's buffers.
    DeviceHooks::fail_and_settle(*live().ctx, std::current_exception());
    throw;
  }
}

void Communicator::send(int peer, const void* data, size_t bytes) {
  check_rank(peer, "send");
  Link& link = link_to(peer);
  const size_t segment = live().segment_bytes;
  const size_t n = segment_count(bytes, segment);
  const auto* p = static_cast<const std::byte*>(readable(data, bytes));
  TraceScope trace(*live().ctx, TraceKind::kTransfer, "send", live().group);
  if (RawTraceEvent* e = trace.event()) {
    e->to = device_id(peer);
    e->bytes = static_cast<int64_t>(bytes);
  }
  const std::optional<LinkStamp> stamp = DeviceHooks::stamp(*live().ctx, trace.event());
  for (size_t i = 0; i < n; ++i) {
    const size_t offset = i * segment;
    post_segment(link, p + offset, n == 1 ? bytes : std::min(segment, bytes - offset), bytes, i,
                 stamp);
  }
}

void Communicator::receive(int peer, void* data, size_t bytes, const Reduce* reduce) {
  Link& link = link_from(peer);
  const size_t segment = live().segment_bytes;
  const size_t n = segment_count(bytes, segment);
  auto* p = static_cast<std::byte*>(data);
  TraceScope trace(*live().ctx, TraceKind::kTransfer, reduce != nullptr ? "recv_reduce" : "recv",
                   live().group);
  LinkStamp first;
  for (size_t i = 0; i < n; ++i) {
    const size_t offset = i * segment;
    const LinkStamp posted = take_segment(
        link, peer, p + offset, n == 1 ? bytes : std::min(segment, bytes - offset), bytes, i, reduce);
    if (i == 0) first = posted;
  }
  arrive(peer, bytes, first.departure);
  if (RawTraceEvent* e = trace.event()) {
    e->from = device_id(peer);
    e->recv_bytes = static_cast<int64_t>(bytes);
    e->flow_in = first.flow;
  }
}

void Communicator::recv(int peer, void* data, size_t bytes) {
  check_rank(peer, "recv");
  receive(peer, data, bytes, nullptr);
}

void Communicator::check_count(int64_t count, const char* what) const {
  if (count < 0) {
    raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() +
                               "'): " + what + " of a negative count " + std::to_string(count)));
  }
}

void Communicator::recv_reduce(int peer, void* data, int64_t count, DType dtype, ReduceOp op) {
  check_rank(peer, "recv_reduce");
  check_count(count, "recv_reduce");
  const Reduce reduce{op, dtype};
  receive(peer, data, static_cast<size_t>(count) * dtype_size(dtype), &reduce);
}

void Communicator::wait_sends() {
  live().pending->drain([&](Link& link) { link.wait_all_released(*live().waiter); });
}

void Communicator::exchange(int to, const void* send_data, size_t send_bytes, int from,
                            void* recv_data, size_t recv_bytes, const Reduce* reduce) {
  check_rank(to, "sendrecv");
  check_rank(from, "sendrecv");
  if (overlaps(send_data, send_bytes, recv_data, recv_bytes)) {
    raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() +
                               "'): sendrecv's receive buffer overlaps its send buffer, which "
                               "the peer may still be reading"));
  }
  Link& out = link_to(to);
  Link& in = link_from(from);
  const size_t segment = live().segment_bytes;
  const size_t sends = segment_count(send_bytes, segment);
  const size_t receives = segment_count(recv_bytes, segment);
  const auto* src = static_cast<const std::byte*>(readable(send_data, send_bytes));
  auto* dst = static_cast<std::byte*>(recv_data);
  // One send and one receive segment in turn, so two members exchanging with
  // each other never both wait for credits.
  uint32_t last = 0;
  bool in_place = false;  // some segment is read from send_data itself
  TraceScope trace(*live().ctx, TraceKind::kTransfer,
                   reduce != nullptr ? "sendrecv_reduce" : "sendrecv", live().group);
  // Both transfers start now: the receive below must not delay the send.
  const std::optional<LinkStamp> stamp = DeviceHooks::stamp(*live().ctx, trace.event());
  LinkStamp received;
  for (size_t i = 0; i < std::max(sends, receives); ++i) {
    const size_t offset = i * segment;
    if (i < sends) {
      const size_t len = sends == 1 ? send_bytes : std::min(segment, send_bytes - offset);
      last = out.post(*live().waiter, src + offset, len, send_bytes, i, stamp);
      in_place = in_place || !Link::copies_at_post(len);
    }
    if (i < receives) {
      const size_t len = receives == 1 ? recv_bytes : std::min(segment, recv_bytes - offset);
      const LinkStamp posted = take_segment(in, from, dst + offset, len, recv_bytes, i, reduce);
      if (i == 0) received = posted;
    }
  }
  arrive(from, recv_bytes, received.departure);
  if (RawTraceEvent* e = trace.event()) {
    e->to = device_id(to);
    e->from = device_id(from);
    e->bytes = static_cast<int64_t>(send_bytes);
    e->recv_bytes = static_cast<int64_t>(recv_bytes);
    e->flow_in = received.flow;
  }
  // Returns with the send buffer free again; the call's end waits for an
  // inline segment to be taken.
  if (in_place) {
    out.wait_released(*live().waiter, last);
  } else {
    live().pending->add(&out);
  }
}

void Communicator::sendrecv(int to, const void* send_data, int from, void* recv_data,
                            size_t bytes) {
  exchange(to, send_data, bytes, from, recv_data, bytes, nullptr);
}

void Communicator::sendrecv(int to, const void* send_data, size_t send_bytes, int from,
                            void* recv_data, size_t recv_bytes) {
  exchange(to, send_data, send_bytes, from, recv_data, recv_bytes, nullptr);
}

void Communicator::sendrecv_reduce(int to, const void* send_data, int from, void* recv_data,
                                   int64_t count, DType dtype, ReduceOp op) {
  check_count(count, "sendrecv_reduce");
  const Reduce reduce{op, dtype};
  const size_t bytes = static_cast<size_t>(count) * dtype_size(dtype);
  exchange(to, send_data, bytes, from, recv_data, bytes, &reduce);
}

Communicator::Concurrent::Concurrent(CommunicatorState& state) : state_(state) {
  DeviceClock& clock = DeviceHooks::clock(*state_.ctx);
  if (clock.concurrent++ == 0) clock.concurrent_departure = clock.now;
}

Communicator::Concurrent::~Concurrent() { --DeviceHooks::clock(*state_.ctx).concurrent; }

Communicator::Concurrent Communicator::concurrent() { return Concurrent(live()); }

void Communicator::barrier() {
  // Priced like the barrier collective: a zero-byte message from every member.
  Rendezvous& rendezvous = *live().group.rendezvous;
  DeviceClock& clock = DeviceHooks::clock(*live().ctx);
  if (clock.on()) rendezvous.post_clock(rank(), clock.departure());
  rendezvous.arrive(rank(), *live().waiter);
  price_meeting(*live().ctx, rendezvous, rank(), [](int) { return int64_t{0}; });
}

Communicator Communicator::subgroup(const AxisNames& sub) {
  if (has_index_groups()) {
    raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() +
                               "'): subgroup of a group given by axis_index_groups"));
  }
  for (std::string_view name : sub.names()) {
    if (std::find(axes().begin(), axes().end(), name) == axes().end()) {
      raise(InvalidArgumentError(std::string(live().op) + " (algorithm '" + algorithm_name() +
                                 "'): subgroup axis '" + std::string(name) +
                                 "' is not one of the group's axes " + AxisNames(axes()).to_string()));
    }
  }
  auto state = std::make_unique<CommunicatorState>(live());
  state->group = DeviceHooks::group(*live().ctx, sub);
  state->pending = live().pending;
  state->is_subgroup = true;
  return Communicator(std::move(state));
}

void reduce_elements(ReduceOp op, DType dtype, void* acc, const void* in, int64_t count) {
  if (count <= 0) return;
  reduce_into(op, dtype, 2, [&](int i) { return i == 0 ? static_cast<const void*>(acc) : in; },
              acc, count);
}

}  // namespace meshsim
