#pragma once
// Rendezvous: where the members of one device group meet for a collective.
//
// One Rendezvous exists per device group (the runtime caches it per mesh,
// axes and axis_index_groups), and it is reused for every collective that
// group runs, so meeting allocates nothing (after a member's first meetings,
// and a leader's first result of a size) and takes no lock.
//
// Protocol for one collective, as each member runs it:
//   1. fill slot(rank): the call (op, dtype, shape, parameters; the
//      caller's, alive until its meet() returns) and buffer pointers — peers
//      may read those buffers in place (zero copy);
//   2. meet(): all members' calls are compared (exactly:
//      CollectiveCall::same_as; a difference fails the whole group with one
//      CollectiveMismatchError). A leader step, if given, runs on one member
//      while the others are held — small collectives of large groups do all
//      their work there, reading peers' inputs in place;
//   3. after the meeting, members may run further phases separated by
//      arrive() calls; the last arrive() of a collective is the departure
//      step that guarantees no peer still reads a buffer its owner is about
//      to reuse.
// Two ways to meet, chosen by group size, the same for every member:
// - groups of at most Exchange::kMaxMembers meet leaderless (Exchange): each
//   member posts and reads every peer's post, and checks the calls itself;
//   meet_sharing() also hands every member a copy of each peer's small input,
//   so a small collective finishes in one meeting, with no departure;
// - larger groups count arrivals; the last member to arrive is the leader: it
//   checks the calls and runs the leader step before it releases everybody.
// Either way a loop's repeated calls are checked without being read: each
// member compares its call with its own last one, and two members that both
// repeat the calls of an all-equal meeting call alike.
// Memory order: a member's slot writes happen before its arrival (the
// release of its post's WaitWord advance, or the acq_rel RMWs on the arrival
// counters: its block's, and the group's by the last of the block); the
// leader's writes happen before the release (seq_cst RMW on the WaitWord),
// which members observe with an acquire load.
//
// A Rendezvous may be destroyed only when no launch uses its mesh.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/comm/internal/exchange.h"
#include "meshsim/runtime/comm/internal/stored_call.h"
#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim {

class Rendezvous {
 public:
  // What a member publishes for its peers. Cache-line aligned: each member
  // writes only its own slot.
  struct alignas(64) Slot {
    // `c` is read by the meeting (not copied: a call is ~200 bytes): it must
    // outlive the member's meet().
    void publish(const CollectiveCall& c, const void* in, void* out, const void* ex = nullptr) {
      call = &c;
      input = in;
      output = out;
      extra = ex;
    }
    void publish(const CollectiveCall&& c, const void* in, void* out,
                 const void* ex = nullptr) = delete;

    const void* input = nullptr;
    void* output = nullptr;
    // Per-member extra data of an operation (e.g. ragged offsets); opaque here.
    const void* extra = nullptr;
    const CollectiveCall* call = nullptr;
    // Counting meetings: whether `call` equals the member's call at the
    // group's previous counting meeting (`last_call`, which only the member
    // reads and writes; false for a call too deep to store, and after one).
    bool repeats = false;
    // Virtual time: the member's clock at its last two posting meetings, by
    // parity of `clock_posts` (post_clock).
    double clock[2] = {0, 0};
    uint32_t clock_posts = 0;
    // Made by the member at its first counting meeting (a group of 65,536
    // that never meets so costs no copies).
    std::unique_ptr<StoredCall> last_call;
  };

  // `agent_ids` in rank order: the members' ids in the launch's mesh (the
  // runtime's agents: links and clocks key on them); `devices` (when
  // positive) the runtime's device count, which maps an agent to its device
  // (mpmd_map's further cores of a device: Fabric). `label` says which
  // group this is, for messages ("axes 'x', group 1 of 2").
  Rendezvous(std::vector<int> agent_ids, std::string label, int devices = 0);

  int size() const { return static_cast<int>(agent_ids_.size()); }
  std::span<const int> agent_ids() const { return agent_ids_; }
  // The members' devices, as users name them (messages, traces,
  // Communicator::device_id): the agent ids unless a device has several
  // cores in the launch.
  std::span<const int> device_ids() const {
    return device_ids_.empty() ? std::span<const int>(agent_ids_) : device_ids_;
  }
  // Member `rank` as messages name it: "device 3", or "device 3 core 1" for
  // a further core of an mpmd_map device.
  std::string member_name(int rank) const;
  // "axes 'x', group 1 of 2 [devices 0, 2]"
  std::string describe() const;
  // "axes 'x', group 1 of 2": the group without its member list, for reports
  // that summarize many devices.
  const std::string& label() const { return label_; }
  Slot& slot(int rank) { return slots_[rank]; }
  const Slot& slot(int rank) const { return slots_[rank]; }
  // Whether a waiter on `word` waits in a meeting of this group (the
  // deadlock report's test for members stuck in different groups).
  bool is_meeting_word(const WaitWord* word) const {
    return word == &released_ || (exchange_ && exchange_->owns(word));
  }
  // Whether this group meets leaderless (see above).
  bool leaderless() const { return exchange_ != nullptr; }

  // The first meeting of a collective, for member `rank`: checks that all
  // calls match (CollectiveMismatchError on every member otherwise) and runs
  // `leader_step` on one member while the others are held.
  void meet(int rank, Waiter& waiter, FunctionRef<void()> leader_step);
  void meet(int rank, Waiter& waiter);
  // meet(), sharing `data` (a copy) with the peers when the group is
  // leaderless and every member's data fits Exchange::kMaxShared. Returns
  // whether it did: then shared_row(rank)[r] is member r's data until this
  // member's next meeting (its own entry may be `data` itself:
  // Exchange::shared_row), and no peer reads the slots' buffers in place.
  bool meet_sharing(int rank, Waiter& waiter, std::span<const std::byte> data);
  // meet_sharing() in two halves, for a leaderless group only
  // (Exchange::post, Exchange::collect): between them, this member's work that
  // needs no peer overlaps the posts' transfers. Every post_sharing() must be
  // followed by its finish_sharing() before the member meets again, also when
  // that work throws.
  void post_sharing(int rank, Waiter& waiter, std::span<const std::byte> data);
  bool finish_sharing(int rank, Waiter& waiter);
  const std::byte* const* shared_row(int reader) const { return exchange_->shared_row(reader); }
  // Virtual time: every member posts its clock before the same meetings (a
  // collective's first meeting, whether or not its cost is then modeled;
  // Communicator barriers); after such a meeting, posted_clock(rank, r) is
  // what member r posted for it. Double-buffered like the exchange's posts:
  // a member overwrites the clock of posting meeting k only at posting
  // meeting k + 2, which it reaches after every peer met it again since
  // reading k. The meeting orders the writes before the reads.
  void post_clock(int rank, double clock) {
    Slot& own = slots_[rank];
    own.clock[own.clock_posts & 1] = clock;
    ++own.clock_posts;
  }
  double posted_clock(int reader, int rank) const {
    return slots_[rank].clock[(slots_[reader].clock_posts - 1) & 1];
  }
  // A further barrier inside the same collective (phases, departure).
  void arrive(int rank, Waiter& waiter);

  // A buffer of at least `bytes` (aligned for any element) for a leader step to leave
  // one result that every member copies after the meeting: cheaper than the
  // leader writing each member's output (one cross-core transfer per member
  // on the path that holds the group). Only a leader step may call it; its
  // contents stay until the group's next leader step, which runs only once
  // every member arrived again: each member must copy the result before its
  // next meeting of this group.
  std::byte* leader_result(size_t bytes);
  // What the last leader step left there (read after the meeting).
  const std::byte* leader_result() const {
    return reinterpret_cast<const std::byte*>(leader_result_.data());
  }

  // Back to the initial state after an aborted launch left members half-way.
  // Only when no thread can be inside this rendezvous.
  void reset();

 private:
  // CancelledError for a device that already settled in its failed launch.
  void refuse_if_settled(Waiter& waiter) const;
  template <class Leader>
  bool arrive_impl(int rank, Waiter& waiter, Leader&& leader);
  // Counts member `rank` in at a counting meeting; true for the last to
  // arrive, which finds every counter back at 0.
  bool last_to_arrive(int rank);
  // The counting meeting whose leader compares the calls.
  void checked_meet(int rank, Waiter& waiter, FunctionRef<void()> leader_step);
  void check_calls();
  // The leaderless meeting; throws CollectiveMismatchError, and runs the
  // counting one when some call was too large to post.
  Exchange::Outcome exchange_meet(int rank, Waiter& waiter, const Exchange::Post& post);
  // What a leaderless meeting's outcome asks of the member: throws the
  // mismatch, or runs the counting meeting for calls too large to post.
  Exchange::Outcome settle(int rank, Waiter& waiter, Exchange::Outcome outcome);
  std::string mismatch_message(const CollectiveCall& first, int rank,
                               const CollectiveCall& other) const;

  std::vector<int> agent_ids_;
  std::vector<int> device_ids_;  // empty when equal to agent_ids_
  int devices_;                   // the runtime's device count (0: not given)
  std::string label_;
  std::unique_ptr<Slot[]> slots_;
  std::unique_ptr<Exchange> exchange_;  // leaderless groups only
  // A counting meeting of a group of at least kBlockArrivalsFrom members
  // counts in two levels: each member in the counter of its block of
  // consecutive ranks (a line of its own), the last of a block in arrived_.
  // Consecutive ranks mostly run on one core (a fiber worker runs a
  // contiguous block of positions), so most increments find their line in
  // their own core's cache, where with one counter for the whole group the
  // line moved between the cores on nearly every arrival.
  struct alignas(64) ArrivalBlock {
    std::atomic<uint32_t> arrived{0};
    uint32_t members = 0;
  };
  static constexpr int kBlockArrivalsFrom = 16;
  int block_ranks_ = 0;  // ranks per block (about sqrt(size)); 0: one level
  std::vector<ArrivalBlock> arrival_blocks_;  // none when one level
  alignas(64) std::atomic<uint32_t> arrived_{0};
  WaitWord released_;
  // Set by the leader before release, read by members after it.
  bool failed_ = false;
  std::vector<std::max_align_t> leader_result_;
  // The calls of the previous counting meeting were all equal (and each
  // member's last_call holds it, or no call): if every member repeats its
  // call, the calls are equal again, and the leader compares none of them.
  bool verified_ = false;
  std::string error_;
};

}  // namespace meshsim
