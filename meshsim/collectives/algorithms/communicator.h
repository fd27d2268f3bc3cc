#pragma once
// Communicator: what an algorithm sees of its group — its rank, the group's
// size and devices, the arguments every member published, point-to-point
// transfers over the runtime's fabric, and barriers. Front-ends create one per
// call; an algorithm receives it by reference and never keeps it.
//
// Point-to-point semantics (the fabric's "collective" lane; psend / precv use
// another lane, so the two never mix):
// - A receiver reads the sender's buffer in place (zero copy: one memcpy or
//   one reduction, no staging buffer) when it is one of the call's Args
//   buffers or memory from scratch(): memory that outlives the call even when
//   the algorithm throws. So a sent buffer must stay unchanged until the
//   receiver has read it. Anything else sent (an algorithm's own vector, its
//   stack) is copied once when sent, into memory the call owns until it ends
//   (so it grows with the bytes sent that way: use scratch()); segments of
//   at most Link::kInlineBytes travel inside their descriptor (the latency
//   path moves one cache line). Either way that buffer is free at once.
// - A transfer moves in segments of `segment_bytes` (the algorithm's tunable
//   "segment_bytes" when it declares one, else one segment). Each segment is
//   one descriptor on the link's ring of Link::kSlots; a send waits only when
//   the receiver has not yet read that many of its segments. The sender and
//   the receiver must pass the same byte count: a mismatch is a
//   CollectiveShapeError naming both devices, raised by the receiver before
//   it reads anything (never a torn read), and it fails the launch.
// - send() returns once its segments are posted; wait_sends() waits until
//   the receivers have taken every segment this member posted. sendrecv() and
//   sendrecv_reduce() interleave one send and one receive segment by segment
//   and return when both are complete (the sent buffer is free again): use
//   them on cycles (rings, pairwise exchanges), where two blocking sends
//   would wait for each other.
// - When the algorithm returns, the front-end waits for its unread sends
//   (wait_sends), so an algorithm need not end with one; a transfer its
//   receiver never takes is a DeadlockError, never left for a later call.
// Every wait is cancelled when another device of the launch fails, and shows
// in deadlock and timeout reports as the collective's name. An error the
// Communicator raises (a bad rank, a size mismatch) first stops the launch
// and waits until no peer can read this member's buffers. An algorithm may
// throw its own exception at any point, sends in flight or not: no peer reads
// memory the unwinding frees (see above), and the front-end stops the launch
// and waits for the peers before the call's memory goes.
//
// A Communicator is used only on its member's device thread, during the call
// that created it. Ranks are positions in the group (0..size()-1); passing
// one outside that range is an InvalidArgumentError naming it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>

#include "meshsim/collectives/algorithms/algorithm_args.h"
#include "meshsim/collectives/reduce_op.h"
#include "meshsim/runtime/array/dtype.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/exec/device_context.h"

namespace meshsim {

struct CommunicatorState;
class Link;
struct LinkStamp;

class Communicator {
 public:
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const;
  int size() const;
  // The device id of group member `rank`.
  int device_id(int rank) const;
  DeviceContext& context();
  // The collective this call is ("all_reduce", ...), and the group it runs
  // over ("axes 'x', group 0 of 2").
  Collective collective() const;
  const std::string& group_label() const;
  // The mesh axes the group spans, major-to-minor (with axis_index_groups,
  // the group is a subset of them: see has_index_groups()).
  std::span<const std::string> axes() const;
  bool has_index_groups() const;

  // Member `rank`'s arguments, as it published them; its buffers may be read
  // in place until this call returns. Only for an algorithm that declares
  // AlgorithmInfo::reads_peer_args (its calls then end with a departure
  // barrier, so no member leaves while another reads its buffers), on the
  // call's own communicator (not a subgroup). Args must be this collective's
  // type (AllReduceArgs for all_reduce, ...). Otherwise InvalidArgumentError.
  template <class Args>
  const Args& peer_args(int rank) const {
    return *static_cast<const Args*>(peer_args_erased(rank, typeid(Args)));
  }

  // The value of tunable `name` for the running algorithm (its declared
  // default unless the runtime's registry set another). InvalidArgumentError
  // for a name the algorithm does not declare.
  int64_t tunable(std::string_view name) const;

  // `bytes` of uninitialized memory owned by this call (shared with its subgroups),
  // freed once the call has ended on this member, or the launch has stopped
  // and no peer can read it: scratch an algorithm sends from, read in place.
  // InvalidArgumentError naming the size if the allocator refuses it.
  std::byte* scratch(size_t bytes);

  // Point-to-point transfers with member `peer` (see above).
  void send(int peer, const void* data, size_t bytes);
  void recv(int peer, void* data, size_t bytes);
  // data[i] = data[i] op peer's[i] for `count` elements of `dtype`.
  void recv_reduce(int peer, void* data, int64_t count, DType dtype, ReduceOp op);
  void wait_sends();
  // recv_data must not overlap send_data (the peer may still be reading it):
  // InvalidArgumentError.
  void sendrecv(int to, const void* send_data, int from, void* recv_data, size_t bytes);
  // The same with a different size each way: `send_bytes` to `to`,
  // `recv_bytes` from `from` (what `from` sends this member, e.g. from a
  // header exchanged first).
  void sendrecv(int to, const void* send_data, size_t send_bytes, int from, void* recv_data,
                size_t recv_bytes);
  void sendrecv_reduce(int to, const void* send_data, int from, void* recv_data, int64_t count,
                       DType dtype, ReduceOp op);

  // No member returns before every member has called it (the group's
  // rendezvous; cancellable like every wait).
  void barrier();

  // Virtual time: the transfers this member begins while the returned scope
  // lives depart together, at its clock when the scope began, as the sends
  // of one step of a bidirectional ring do on full-duplex links (as NCCL's
  // group calls issue theirs). Receives in the scope still move the clock,
  // and the sends after it depart from there. Changes nothing on the host
  // (data, order, waits). Scopes nest; the outermost one counts.
  class Concurrent {
   public:
    ~Concurrent();
    Concurrent(const Concurrent&) = delete;
    Concurrent& operator=(const Concurrent&) = delete;

   private:
    friend class Communicator;
    explicit Concurrent(CommunicatorState& state);
    CommunicatorState& state_;
  };
  [[nodiscard]] Concurrent concurrent();

  // A communicator over a subset of this group's axes: the members that share
  // this member's indices along the other axes. For algorithms composed over
  // mesh axes (hierarchical). InvalidArgumentError when the group has
  // axis_index_groups or `sub` is not a subset of axes(). The sub-communicator
  // belongs to this call and is used between this call's meetings only.
  Communicator subgroup(const AxisNames& sub);

  // For the runtime: front-ends build communicators through internal hooks.
  explicit Communicator(std::unique_ptr<CommunicatorState> state);
  // The moved-from communicator is empty: any use is a RuntimeUsageError.
  Communicator(Communicator&&) noexcept;
  CommunicatorState& state() { return live(); }

 private:
  // The state; RuntimeUsageError for a moved-from communicator.
  CommunicatorState& live() const;
  struct Reduce {
    ReduceOp op;
    DType dtype;
  };
  const void* peer_args_erased(int rank, const std::type_info& type) const;
  void check_rank(int rank, const char* what) const;
  // Fails the launch and waits until no peer can touch this member's buffers,
  // then throws `error`.
  template <class E>
  [[noreturn]] void raise(const E& error) const;
  std::string algorithm_name() const;
  // raise() of an InvalidArgumentError: `what` of `bytes` bytes could not be
  // allocated.
  [[noreturn]] void raise_out_of_memory(const char* what, size_t bytes) const;
  Link& link_to(int peer);
  Link& link_from(int peer);
  void check_count(int64_t count, const char* what) const;
  // `stamp`: the transfer's departure and flow id (DeviceHooks::stamp).
  void post_segment(Link& link, const void* data, size_t bytes, size_t total, size_t index,
                    std::optional<LinkStamp> stamp);
  // `data` itself if a peer may read it in place (see above), else a copy.
  const void* readable(const void* data, size_t bytes);
  // Takes segment `index` (`bytes` of a `total`-byte transfer) from `link`
  // into `data` (copy, or reduce when `reduce` is set); CollectiveShapeError
  // if the sender posted anything else. Returns the segment's stamp (zeros
  // without virtual time or a trace).
  LinkStamp take_segment(Link& link, int peer, void* data, size_t bytes, size_t total,
                         size_t index, const Reduce* reduce);
  // Virtual time: a whole transfer of `bytes` from `peer`, which departed at
  // `departure`, has arrived.
  void arrive(int peer, size_t bytes, double departure);
  void receive(int peer, void* data, size_t bytes, const Reduce* reduce);
  void exchange(int to, const void* send_data, size_t send_bytes, int from, void* recv_data,
                size_t recv_bytes, const Reduce* reduce);

  std::unique_ptr<CommunicatorState> state_;
};

// acc[i] = acc[i] op in[i] for i in [0, count): the elementwise reduction every
// built-in algorithm uses (same rules as psum: float16 / bfloat16 computed in
// float32 and rounded once per call, NaN propagates through max / min,
// integers wrap). Not for a sum of bool (front-ends pass such sums as int32).
void reduce_elements(ReduceOp op, DType dtype, void* acc, const void* in, int64_t count);

}  // namespace meshsim
