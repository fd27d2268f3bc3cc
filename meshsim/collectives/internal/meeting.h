#pragma once
// Meeting: the common opening of every direct collective, so each collective
// file only states what it reads and writes. It looks up the device's group
// for the axes (cached; no lock, no allocation on a hit; a bad axis or group
// is an error naming the operation), marks the operation
// for deadlock and timeout reports for as long as it lives, and publishes the
// call and the buffers peers may read in place.
//
// Usage, on every member of the group:
//   Meeting m(ctx, axes, groups, "all_gather");
//   CollectiveCall call("all_gather", x.dtype(), x.shape());
//   m.publish(call.param("tiled", 1), in, out);  // `call` must outlive meet()
//   m.meet();            // checks the calls match, then everyone proceeds
//   m.price(...);        // virtual time: the transfers it stands for arrive
//   ... read m.input(r) ...
//   m.arrive();          // departure: nobody reads our buffers any more
// Buffers published must stay valid until the member's last arrive() (or,
// when meet_sharing shared them, until it returns). A collective whose
// result no peer touches publishes a null output and makes its result with
// the meeting instead (meet_sharing_making, run_direct_making), so the
// allocation overlaps the peers' transfer.

#include <algorithm>
#include <cstddef>
#include <exception>
#include <span>

#include "meshsim/collectives/internal/axis_checks.h"
#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/comm/internal/rendezvous.h"

namespace meshsim {

// Virtual time, after a meeting of `rendezvous` at which every member posted
// its clock (Rendezvous::post_clock): member `rank` receives what each peer
// r sends it, `bytes_from(r)` bytes (none when negative), departing at r's
// posted clock. A no-op when the launch keeps no virtual time. A model that
// throws (a user's callback) fails the launch first: peers may still read
// this member's buffers in place.
namespace detail {
// price_meeting for a launch that keeps virtual time (out of line: the
// try/catch keeps it from being inlined into every collective).
template <class BytesFrom>
[[gnu::noinline]] void price_meeting_on(DeviceContext& ctx, DeviceClock& clock,
                                        const Rendezvous& rendezvous, int rank,
                                        BytesFrom bytes_from) {
  const auto ids = rendezvous.agent_ids();
  try {
    for (int r = 0; r < rendezvous.size(); ++r) {
      if (r == rank) continue;
      const int64_t bytes = bytes_from(r);
      if (bytes >= 0) clock.receive(ids[r], ids[rank], bytes, rendezvous.posted_clock(rank, r));
    }
  } catch (...) {
    DeviceHooks::fail_and_settle(ctx, std::current_exception());
    throw;
  }
}
}  // namespace detail

// Inline down to the check: most launches keep no time.
template <class BytesFrom>
inline void price_meeting(DeviceContext& ctx, const Rendezvous& rendezvous, int rank,
                          BytesFrom bytes_from) {
  DeviceClock& clock = DeviceHooks::clock(ctx);
  if (clock.on()) detail::price_meeting_on(ctx, clock, rendezvous, rank, bytes_from);
}

class Meeting {
 public:
  Meeting(DeviceContext& ctx, const AxisNames& axes, const AxisIndexGroups& index_groups,
          const char* op)
      : ctx_(ctx),
        group_(detail::group_for(ctx, axes, index_groups, op)),
        scope_(ctx, op, group_) {}

  int size() const { return group_.rendezvous->size(); }
  int rank() const { return group_.rank; }
  const GroupSet& group_set() const { return *group_.set; }
  Rendezvous& rendezvous() { return *group_.rendezvous; }
  const GroupRef& group() const { return group_; }
  DeviceContext& context() { return ctx_; }

  // `call` is read in place by meet(), so it must outlive it.
  void publish(const CollectiveCall& call, const void* input, void* output,
               const void* extra = nullptr) {
    group_.rendezvous->slot(group_.rank).publish(call, input, output, extra);
    // A collective with no algorithm choice (ppermute, argmax) is traced
    // with its input's bytes.
    if (RawTraceEvent* e = scope_.event(); e != nullptr && e->algorithm.empty()) {
      int64_t elements = 1;
      for (int64_t d : call.shape) elements *= d;
      e->bytes = elements * static_cast<int64_t>(dtype_size(call.dtype));
    }
  }
  void publish(const CollectiveCall&& call, const void* input, void* output,
               const void* extra = nullptr) = delete;
  const Rendezvous::Slot& peer(int rank) const { return group_.rendezvous->slot(rank); }

  // The first meeting: see Rendezvous::meet.
  void meet(FunctionRef<void()> leader_step) {
    post_clock();
    rendezvous().meet(rank(), waiter(), leader_step);
  }
  void meet() {
    post_clock();
    rendezvous().meet(rank(), waiter());
  }
  // meet(), sharing a copy of this member's `input_bytes` of published input
  // when the group is leaderless and it is small (Rendezvous::meet_sharing).
  // Returns whether it did; then input(r) reads the copies, and no departure
  // is needed.
  bool meet_sharing(size_t input_bytes) {
    post_clock();
    const bool shared = rendezvous().meet_sharing(rank(), waiter(), input_span(input_bytes));
    shared_inputs_ = shared ? rendezvous().shared_row(rank()) : nullptr;
    return shared;
  }
  // meet_sharing() for a leaderless group (rendezvous().leaderless()),
  // making this member's result meanwhile: `make()` (which must read nothing
  // of the peers) runs once after the post is out and before the wait for
  // the peers' posts, so it overlaps their transfer instead of delaying this
  // member's next post. Returns what make() returned (constructed in place);
  // inputs_shared() then says whether the inputs were shared. When they were
  // not, peers read this member's input in place, and the caller must
  // arrive() (depart) once it has read theirs. If make() throws, the member
  // still completes the meeting and, inputs unshared, departs (its peers'
  // posts and reads rely on both) before the error propagates; it wins over
  // what the meeting would throw.
  template <class Make>
  auto meet_sharing_making(size_t input_bytes, Make&& make) {
    Rendezvous& group = rendezvous();
    post_clock();
    group.post_sharing(rank(), waiter(), input_span(input_bytes));
    auto made = [&] {
      try {
        return make();
      } catch (...) {
        try {
          if (!group.finish_sharing(rank(), waiter())) arrive();
        } catch (...) {  // the launch aborted, or the calls differ: the first error stands
        }
        throw;
      }
    }();
    shared_inputs_ = group.finish_sharing(rank(), waiter()) ? group.shared_row(rank()) : nullptr;
    return made;
  }
  bool inputs_shared() const { return shared_inputs_ != nullptr; }
  // Virtual time, after the first meeting: the transfers this collective
  // stands for arrive (time/virtual_time.h). `bytes_from(r)` is what member r
  // sends this member, or a negative number when it sends nothing. A no-op
  // when the launch keeps no virtual time.
  template <class BytesFrom>
  void price(BytesFrom bytes_from) {
    price_meeting(ctx_, rendezvous(), rank(), bytes_from);
  }
  // price() for a collective in which every member sends `bytes` to every
  // other member (psum, all_gather, barrier).
  void price_all_to_all(int64_t bytes) {
    price([bytes](int) { return bytes; });
  }
  // A further barrier (phase boundary or departure).
  void arrive() { rendezvous().arrive(rank(), waiter()); }

  // After the first meeting of a leaderless group, for a member about to read
  // bytes [offset, offset + bytes) of every peer's input element by element
  // and input after input (a reduction): starts loading them all, up to
  // kPrefetchBytes of each, so that their cross-core transfers overlap
  // instead of following one another as the loop reaches them (2-device
  // 1 KiB psum: -13 % while the VM's cross-core latency is high, -2 % when
  // it is low). A hint: no effect on what is read.
  static constexpr size_t kPrefetchBytes = 2048;
  void prefetch_peer_inputs(size_t offset, size_t bytes) const {
    constexpr size_t kLine = 64;
    bytes = std::min(bytes, kPrefetchBytes);
    if (bytes <= kLine || !group_.rendezvous->leaderless()) return;  // a read is as early
    for (int r = 0; r < size(); ++r) {
      if (r == rank()) continue;
      const char* data = static_cast<const char*>(input(r)) + offset;
      for (size_t at = 0; at < bytes; at += kLine) __builtin_prefetch(data + at, 0, 3);
    }
  }

  // Member `rank`'s published input: the copy it shared in meet_sharing, else
  // its buffer, read in place.
  const void* input(int rank) const {
    return shared_inputs_ != nullptr ? shared_inputs_[rank] : peer(rank).input;
  }

  // The schedule most direct collectives share, given `work(rank, output)`
  // that computes member `rank`'s result into `output` from input(r), the
  // peers' published inputs (`input_bytes` each):
  // - leaderless group, small inputs: the members share copies of their
  //   inputs and each does its own work — 1 meeting;
  // - leaderless group, larger inputs: each member does its own work reading
  //   inputs in place, then departs — 2 meetings;
  // - larger group, small (`leader_bytes` <= kLeaderBytes, the bytes the
  //   leader would touch): the last member to arrive does every member's work
  //   before it releases the group — 1 barrier;
  // - large: each member does its own work after the meeting, then meets again
  //   (departure) so no input is released while a peer reads it — 2 barriers.
  static constexpr size_t kLeaderBytes = 64 * 1024;
  void run_direct(size_t input_bytes, size_t leader_bytes,
                  FunctionRef<void(int rank, void* output)> work) {
    if (rendezvous().leaderless()) {
      const bool shared = meet_sharing(input_bytes);
      work(rank(), peer(rank()).output);
      if (!shared) arrive();
      return;
    }
    if (leader_bytes <= kLeaderBytes) {
      meet([&] {
        for (int r = 0; r < size(); ++r) work(r, peer(r).output);
      });
      return;
    }
    meet();
    work(rank(), peer(rank()).output);
    arrive();
  }
  // run_direct() for a member whose result `make()` makes (an Array; the
  // caller published its call and input with a null output). In a
  // leaderless group, where only the member itself touches its output,
  // make() runs while the post travels (meet_sharing_making); otherwise it
  // runs first, and the result's buffer is published as the member's output
  // for the leader. Returns the result.
  template <class Make>
  Array run_direct_making(size_t input_bytes, size_t leader_bytes, Make&& make,
                          FunctionRef<void(int rank, void* output)> work) {
    const bool leaderless = rendezvous().leaderless();
    Array out = leaderless ? meet_sharing_making(input_bytes, make) : make();
    if (leaderless) {
      work(rank(), out.mutable_bytes());
      if (!inputs_shared()) arrive();
    } else {
      rendezvous().slot(rank()).output = out.mutable_bytes();
      run_direct(input_bytes, leader_bytes, work);
    }
    return out;
  }

 private:
  Waiter& waiter() { return DeviceHooks::group_waiter(ctx_); }
  std::span<const std::byte> input_span(size_t bytes) const {
    return {static_cast<const std::byte*>(peer(rank()).input), bytes};
  }
  void post_clock() {
    if (clock_.on()) rendezvous().post_clock(rank(), clock_.departure());
  }

  DeviceContext& ctx_;
  GroupRef group_;
  OpScope scope_;
  // After a meet_sharing that shared: where the copies are, by rank.
  const std::byte* const* shared_inputs_ = nullptr;
  DeviceClock& clock_ = DeviceHooks::clock(ctx_);
};

}  // namespace meshsim
