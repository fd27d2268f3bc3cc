#include "meshsim/runtime/comm/internal/exchange.h"

#include <cstring>
#include <string>

#include "meshsim/mesh/error.h"

namespace meshsim {
namespace {

// What a post says about itself, at the start of its word's payload.
struct Header {
  enum Kind : uint8_t { kBarrier, kStoredCall, kUnstoredCall };
  uint16_t bytes = 0;  // shared data
  Kind kind = kBarrier;
  bool shared : 1 = false;
  // The call equals the member's call at the last meeting of this parity
  // that carried one, whose calls were all equal (Member::equal_at).
  bool repeats : 1 = false;
};
// Inline data starts 16 bytes into the (64-aligned) line: aligned for any
// element type, since members read it as typed arrays.
constexpr size_t kHeaderBytes = 4;
static_assert(sizeof(Header) <= kHeaderBytes);
static_assert(Exchange::kMaxShared <= UINT16_MAX);
static_assert((64 - WaitWord::kPayloadBytes + kHeaderBytes) % alignof(std::max_align_t) == 0);
constexpr size_t kInlineBytes = WaitWord::kPayloadBytes - kHeaderBytes;

Header header_of(const WaitWord& word) {
  Header h;
  std::memcpy(&h, word.payload(), sizeof(h));
  return h;
}

// A hint that this thread will write the cache line at `p` soon: it starts
// taking the line from the caches that share it. Inline assembly on x86:
// the builtin emits PREFETCHW only under -mprfchw, and a CPU without it (Intel
// before Broadwell) runs it as a no-op.
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetchw %0" ::"m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

// `members`, if an Exchange can have that many (SharedData has a pointer per
// member); else InvalidArgumentError.
int checked_members(int members) {
  if (members < 1 || members > Exchange::kMaxMembers) {
    throw InvalidArgumentError("an Exchange has 1 to " + std::to_string(Exchange::kMaxMembers) +
                               " members, not " + std::to_string(members));
  }
  return members;
}

}  // namespace

// What does not fit the word's line: allocated by its owner the first time it
// posts a call or more than kInlineBytes of data.
struct Exchange::Extra {
  StoredCall call;
  alignas(64) std::byte data[kMaxShared];
};

// One member's posts (the two parities) and its meeting count. Written only by
// the member, read by its peers after they see the word advance.
struct alignas(64) Exchange::Member {
  WaitWord posted[2];
  std::unique_ptr<Extra> extra[2];  // read by peers: not in the line of `meetings`
  alignas(64) uint32_t meetings = 0;
  // By parity: whether the calls of the member's last meeting of that parity
  // that carried calls were all equal. Every member makes the same meetings
  // and reaches the same outcome, so each knows it of all.
  bool equal_at[2] = {false, false};
  // What post() posted, for collect(): kept here because peers read the
  // word's line, so reading it back could miss. The header as its bytes.
  std::byte posted_header[kHeaderBytes] = {};
  uint32_t posted_value = 0;
  const CollectiveCall* posted_call = nullptr;

  Extra& extra_for(int parity) {
    if (!extra[parity]) extra[parity] = std::make_unique<Extra>();
    return *extra[parity];
  }
  int parity() const { return static_cast<int>(meetings & 1); }
  // Prefetches for writing the lines a post of `parity` like the one `h`
  // describes writes: its word's, and its shared data's beyond the word.
  void prepare_post(int parity, const Header& h) const {
    prefetch_for_write(&posted[parity]);
    if (h.shared && h.bytes > kInlineBytes && extra[parity]) {
      const std::byte* data = extra[parity]->data;
      for (size_t at = 0; at < h.bytes; at += 64) prefetch_for_write(data + at);
    }
  }
  // The data shared by this member's post of `parity`, whose header is `h`:
  // in the word's line, or in the extra block.
  const std::byte* shared_data(int parity, const Header& h) const {
    return h.bytes <= kInlineBytes ? posted[parity].payload() + kHeaderBytes : extra[parity]->data;
  }
};

Exchange::Exchange(int members)
    : members_count_(checked_members(members)),
      members_(new Member[members]),
      shared_(new SharedData[members]) {}
Exchange::~Exchange() = default;

void Exchange::post(int rank, const Post& post) {
  Member& me = members_[rank];
  ++me.meetings;
  const int parity = me.parity();
  WaitWord& word = me.posted[parity];

  // Fields first, the header once: assembling its bit-fields in memory piece
  // by piece made a stalled store forward on every post.
  Header::Kind kind = Header::kBarrier;
  bool repeats = false;
  if (post.call != nullptr) {
    if (StoredCall::fits(*post.call)) {
      kind = Header::kStoredCall;
      repeats = me.extra_for(parity).call.store(*post.call) && me.equal_at[parity];
    } else {
      kind = Header::kUnstoredCall;
    }
  }
  const bool share = post.share && post.data.size() <= kMaxShared;
  const Header header{share ? static_cast<uint16_t>(post.data.size()) : uint16_t{0}, kind, share,
                      repeats};
  if (share) {
    if (!post.data.empty()) {
      std::byte* dst = post.data.size() <= kInlineBytes ? word.payload() + kHeaderBytes
                                                          : me.extra_for(parity).data;
      std::memcpy(dst, post.data.data(), post.data.size());
    }
  }
  std::memcpy(word.payload(), &header, sizeof(header));
  const uint32_t posted = word.advance();
  // A member reads its own data where it keeps it, not back from its post:
  // the peers are reading that line, and a reduction that read it back
  // missed on it (2-device 8-byte psum: 0.226 -> 0.201 us, paired phases
  // in one process).
  if (header.shared) {
    const std::byte* own = post.data.data();
    const bool usable = own != nullptr &&  // (no data: the post's address, never null)
                        reinterpret_cast<uintptr_t>(own) % alignof(std::max_align_t) == 0;
    shared_[rank].data[rank] = usable ? own : me.shared_data(parity, header);
  }
  std::memcpy(me.posted_header, &header, sizeof(header));
  me.posted_value = posted;
  me.posted_call = post.call;
}

Exchange::Outcome Exchange::collect(int rank, Waiter& waiter) {
  Member& me = members_[rank];
  const CollectiveCall* const call = me.posted_call;
  const int parity = me.parity();
  Header header;
  std::memcpy(&header, me.posted_header, sizeof(header));
  const uint32_t posted = me.posted_value;
  bool all_stored = header.kind == Header::kStoredCall;
  bool all_shared = header.shared;
  bool all_same = true;
  for (int r = 0; r < members_count_; ++r) {
    if (r == rank) continue;
    const WaitWord& theirs = members_[r].posted[parity];
    waiter.wait(theirs, [posted](uint32_t value) { return value == posted; });
    const Header h = header_of(theirs);
    all_shared = all_shared && h.shared;
    if (all_shared) shared_[rank].data[r] = members_[r].shared_data(parity, h);
    if (call == nullptr) continue;
    all_stored = all_stored && h.kind == Header::kStoredCall;
    // Two members that both repeat still call alike: each call equals its
    // member's last of this parity, and those were all equal. A loop's
    // repeats so compare nothing (each member checked its own call above).
    if (all_stored && all_same && !(header.repeats && h.repeats)) {
      all_same = members_[r].extra[parity]->call.view().same_as(*call);
    }
  }
  // Every peer has posted this meeting, so none reads this member's post of
  // the other parity any more: start taking its lines for writing now, so
  // that the next post's advance() (a locked RMW, which waits for its store
  // buffer) finds them local instead of waiting for the peers' copies to be
  // invalidated (2-device psum, paired runs: 8 B 0.48 -> 0.31 us, 1 KiB
  // 0.68 -> 0.66 us). The next post is assumed the size of this one.
  me.prepare_post(parity ^ 1, header);
  if (call == nullptr) return Outcome::kMet;
  me.equal_at[parity] = all_stored && all_same;
  if (!all_stored) return Outcome::kUnchecked;
  if (!all_same) return Outcome::kMismatch;
  return all_shared ? Outcome::kShared : Outcome::kMet;
}

CollectiveCall Exchange::call(int reader, int rank) const {
  return members_[rank].extra[members_[reader].parity()]->call.view();
}

int Exchange::mismatch(int reader) const {
  const CollectiveCall first = call(reader, 0);
  for (int r = 1; r < members_count_; ++r) {
    if (!call(reader, r).same_as(first)) return r;
  }
  return 0;
}

bool Exchange::owns(const WaitWord* word) const {
  for (int r = 0; r < members_count_; ++r) {
    for (const WaitWord& w : members_[r].posted) {
      if (word == &w) return true;
    }
  }
  return false;
}

void Exchange::reset() {
  for (int r = 0; r < members_count_; ++r) {
    members_[r].meetings = 0;
    members_[r].equal_at[0] = members_[r].equal_at[1] = false;
    for (WaitWord& w : members_[r].posted) w.reset();
  }
}

}  // namespace meshsim
