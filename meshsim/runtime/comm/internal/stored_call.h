#pragma once
// StoredCall: a CollectiveCall copied by value (its shape and list too), so a
// peer can still compare it after the caller has returned and freed what the
// call's spans point to. Used by Exchange, whose posts outlive their call, and
// by Rendezvous, where each member keeps its last call to spot a repeat.

#include <array>
#include <cstdint>

#include "meshsim/runtime/comm/internal/collective_call.h"

namespace meshsim {

class StoredCall {
 public:
  StoredCall() = default;
  // The spans point into the object itself.
  StoredCall(const StoredCall&) = delete;
  StoredCall& operator=(const StoredCall&) = delete;

  static constexpr int kMaxRank = 8;
  static constexpr int kMaxList = 32;

  // Whether `call` fits (shape rank <= kMaxRank, list <= kMaxList elements).
  static bool fits(const CollectiveCall& call) {
    return call.shape.size() <= kMaxRank && call.list.size() <= kMaxList;
  }
  // Stores `call`, which must fit. Writes nothing when the stored call is
  // already the same, so a call repeated in a loop leaves this memory clean in
  // every reader's cache. Returns whether it was the same.
  bool store(const CollectiveCall& call);
  // Back to no call: store() then reports no call as the same.
  void clear() { call_ = CollectiveCall(); }
  // The stored call; its spans point into this object.
  const CollectiveCall& view() const { return call_; }

 private:
  CollectiveCall call_;
  std::array<int64_t, kMaxRank> shape_{};
  std::array<int64_t, kMaxList> list_{};
};

}  // namespace meshsim
