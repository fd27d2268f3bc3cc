#pragma once
// Rendezvous: where the members of one device group meet for a collective.
//
// One Rendezvous exists per device group (the runtime caches it per mesh,
// axes and axis_index_groups), and it is reused for every collective that
// group runs, so meeting allocates nothing and takes no lock.
//
// Protocol for one collective, as each member runs it:
//   1. fill slot(rank): the call (op, dtype, shape, parameters) and buffer
//      pointers — peers may read those buffers in place (zero copy);
//   2. arrive(): the last member to arrive is the leader. Before it releases
//      anybody it compares every member's call with member 0's (signature,
//      then every field exactly: CollectiveCall::same_as; a difference
//      fails the whole group with one CollectiveMismatchError) and runs the
//      leader step it was given — small collectives do all their work there,
//      reading peers' inputs while those peers are still held;
//   3. after release, members may run further phases separated by arrive()
//      calls; the last arrive() of a collective is the departure step that
//      guarantees no peer still reads a buffer its owner is about to reuse.
// Memory order: a member's slot writes happen before its arrival (acq_rel RMW
// on the arrival counter); the leader's writes happen before the release
// (seq_cst RMW on the WaitWord), which members observe with an acquire load.
//
// A Rendezvous may be destroyed only when no launch uses its mesh.

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim {

class Rendezvous {
 public:
  // What a member publishes for its peers. Cache-line aligned: each member
  // writes only its own slot. The first line holds the call's signature (the
  // leader's fast reject) and the buffers; the full call follows, compared
  // exactly whenever signatures are equal.
  struct alignas(64) Slot {
    void publish(const CollectiveCall& c, const void* in, void* out, const void* ex = nullptr) {
      call = c;
      signature = c.signature();
      input = in;
      output = out;
      extra = ex;
    }

    uint64_t signature = 0;
    const void* input = nullptr;
    void* output = nullptr;
    // Per-member extra data of an operation (e.g. ragged offsets); opaque here.
    const void* extra = nullptr;
    CollectiveCall call;
  };

  // `device_ids` in rank order; `label` says which group this is, for messages
  // ("axes 'x', group 1 of 2").
  Rendezvous(std::vector<int> device_ids, std::string label);

  int size() const { return static_cast<int>(device_ids_.size()); }
  std::span<const int> device_ids() const { return device_ids_; }
  // "axes 'x', group 1 of 2 [devices 0, 2]"
  std::string describe() const;
  // "axes 'x', group 1 of 2": the group without its member list, for reports
  // that summarize many devices.
  const std::string& label() const { return label_; }
  Slot& slot(int rank) { return slots_[rank]; }
  const Slot& slot(int rank) const { return slots_[rank]; }

  // The first meeting of a collective: checks that all calls match, runs
  // `leader_step` on the last member to arrive, releases everybody, and throws
  // CollectiveMismatchError on every member if the calls differed (then the
  // leader step is skipped).
  void meet(Waiter& waiter, FunctionRef<void()> leader_step);
  void meet(Waiter& waiter) {
    meet(waiter, [] {});
  }
  // A further barrier inside the same collective (phases, departure).
  void arrive(Waiter& waiter);

  // Back to the initial state after an aborted launch left members half-way.
  // Only when no thread can be inside this rendezvous.
  void reset();

 private:
  template <class Leader>
  bool arrive_impl(Waiter& waiter, Leader&& leader);
  void check_calls();

  std::vector<int> device_ids_;
  std::string label_;
  std::unique_ptr<Slot[]> slots_;
  alignas(64) std::atomic<uint32_t> arrived_{0};
  WaitWord released_;
  // Set by the leader before release, read by members after it.
  bool failed_ = false;
  std::string error_;
};

}  // namespace meshsim
