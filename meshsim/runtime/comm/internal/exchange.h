#pragma once
// Exchange: how the members of a small group meet without a leader. Each
// member writes its post — its call and, on the small-message path, a copy of
// its input — into its own cache lines and announces it by advancing its own
// WaitWord; then it waits for every peer's word and reads the peers' posts
// itself. Up to 48 bytes of data travel in the line of the word that
// announces them. On two cores a meeting costs one cache-line transfer each
// way, in parallel; a leader-based meeting chains four or five.
//
// Posts are double-buffered by the parity of the member's meeting count. A
// member overwrites its post of meeting k only at meeting k+2, which it
// starts after every peer posted k+1, which each peer did after reading post
// k. So peers' posts stay readable until this member's next meeting, and no
// departure step is needed.
//
// Every member of the group must make the same sequence of meetings (they do:
// the calls are checked at each meeting that carries one, and a member that
// diverges deadlocks its launch, which then resets the exchange). A call that
// repeats the member's last call of the same parity, after a meeting whose
// calls were all equal, says so in its post; two such members skip comparing
// each other's calls (exact, since all members reach the same outcomes). Reading n-1 words
// per member is O(n^2) in all, so only groups of at most kMaxMembers use it.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/comm/internal/stored_call.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim {

class Exchange {
 public:
  static constexpr int kMaxMembers = 8;
  // Data a post can share: enough for the small-message sizes (1 KiB per
  // device), small enough that copying it costs less than a second meeting.
  static constexpr size_t kMaxShared = 2048;

  struct Post {
    // Null for a barrier (a departure, a communicator's barrier): nothing to
    // compare. Otherwise the call every member must match.
    const CollectiveCall* call = nullptr;
    // Shared with the peers when every member shares and each fits
    // kMaxShared; null `data` with `share` shares zero bytes.
    bool share = false;
    std::span<const std::byte> data;
  };

  enum class Outcome {
    kMet,        // everybody posted; calls (if any) equal; data not shared
    kShared,     // as kMet, and shared_row(reader)[r] holds member r's data
    kMismatch,   // the calls differ: mismatch() names the first pair
    kUnchecked,  // some call did not fit a StoredCall: the caller compares the
                 // calls itself, in a meeting where everybody is held
  };

  // 1 to kMaxMembers members (InvalidArgumentError otherwise).
  explicit Exchange(int members);
  ~Exchange();

  int size() const { return members_count_; }
  // Posts for member `rank`, waits for every peer's post of the same meeting
  // (throws CancelledError if the launch aborts meanwhile), and compares.
  Outcome meet(int rank, Waiter& waiter, const Post& post) {
    this->post(rank, post);
    return collect(rank, waiter);
  }
  // meet() in two halves, so that the member's work that needs no peer (making
  // its result) overlaps the posts' transfers instead of delaying its next
  // post: post() puts the post out; collect() waits for the peers' posts of
  // the same meeting and compares them with the call posted (which must still
  // be alive). A member must collect every meeting it posted before it posts
  // again, also when its work in between fails: the posts' double-buffering
  // relies on it.
  void post(int rank, const Post& post);
  Outcome collect(int rank, Waiter& waiter);

  // After kShared, for `reader`: shared_row(reader)[r] is member r's data;
  // valid until the reader's next meeting, and never null. The reader's own
  // entry is the post's `data` itself when that is non-null and aligned for
  // any element type (valid while the caller keeps it), else its post's copy.
  const std::byte* const* shared_row(int reader) const { return shared_[reader].data; }
  // After kMismatch, for `reader`: the first member whose call differs from
  // member 0's.
  int mismatch(int reader) const;
  // After a meeting, for `reader`: the call member `rank` posted; its spans
  // point into the post, valid until the reader's next meeting.
  CollectiveCall call(int reader, int rank) const;

  // Whether `word` is one of the members' post words.
  bool owns(const WaitWord* word) const;

  // Back to the initial state after an aborted launch left members half-way.
  // Only when no thread can be inside this exchange.
  void reset();

 private:
  struct Extra;
  struct Member;

  // Where each member found its peers' shared data at its last meeting: its
  // own line, written and read only by that member.
  struct alignas(64) SharedData {
    const std::byte* data[kMaxMembers];
  };

  int members_count_;
  std::unique_ptr<Member[]> members_;
  std::unique_ptr<SharedData[]> shared_;
};

}  // namespace meshsim
