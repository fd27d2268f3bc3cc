#pragma once
// CommunicatorState: what a Communicator refers to — the member's device,
// its group (rendezvous, rank), the runtime's fabric, the running algorithm's
// registry entry, and the sends it has posted and not yet seen read.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "meshsim/collectives/algorithms/internal/registry_tables.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim {

// The links a member posted segments to during one call, so
// wait_sends() waits on exactly those: until each has every descriptor
// released (the member is the only sender on its links). Only a repeat of the
// last link is skipped, so adding is O(1); a link listed twice is waited on
// twice, the second time at no cost.
class PendingSends {
 public:
  void add(Link* link) {
    if (links_.empty() || links_.back() != link) links_.push_back(link);
  }
  template <class Visit>
  void drain(Visit visit) {
    for (Link* link : links_) visit(*link);
    links_.clear();
  }

 private:
  std::vector<Link*> links_;
};

// What a call's sends may be read from in place. A receiver reads the
// sender's bytes in place, so they must outlive every read — even when the
// sender's algorithm throws and its own frames unwind before the launch
// settles. So only memory that outlives the call is read in place: the
// call's argument buffers (owned by the front-end, which settles before it
// unwinds) and blocks this object owns (Communicator::scratch, and copies of
// anything else sent). A call's communicators share one CallMemory; it dies
// with the last of them, after the call has ended or settled.
class CallMemory {
 public:
  void vouch(const void* data, size_t bytes);
  bool vouched(const void* data, size_t bytes) const;
  // A new block of `bytes` (uninitialized), vouched.
  std::byte* scratch(size_t bytes);
  // A copy of `bytes` at `data`, owned until the call ends (not vouched).
  const std::byte* copy(const void* data, size_t bytes);

 private:
  struct Range {
    const std::byte* begin;
    size_t bytes;
  };
  std::vector<Range> vouched_;
  std::vector<std::unique_ptr<std::byte[]>> blocks_;
};

struct CommunicatorState {
  DeviceContext* ctx = nullptr;
  Waiter* waiter = nullptr;
  const char* op = "";  // the front-end, for messages
  GroupRef group;
  Collective collective = Collective::kAllReduce;
  const RegistryEntry* entry = nullptr;
  size_t segment_bytes = 0;  // 0: one segment per transfer
  std::shared_ptr<CallMemory> memory = std::make_shared<CallMemory>();
  PendingSends own_pending;
  PendingSends* pending = &own_pending;  // a subgroup's are its parent's
  bool is_subgroup = false;
};

}  // namespace meshsim
