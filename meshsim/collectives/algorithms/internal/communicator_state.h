#pragma once
// CommunicatorState: what a Communicator refers to — the member's device,
// its group (rendezvous, rank), the runtime's fabric, the running algorithm's
// registry entry, and the sends it has posted and not yet seen read.

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "meshsim/collectives/algorithms/internal/registry_tables.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim {

// The links a member posted to during one call, each with the sequence of its
// last descriptor, so wait_sends() waits on exactly those. Inline for the
// few peers most algorithms talk to; a vector past that.
class PendingSends {
 public:
  void add(Link* link, uint32_t sequence);
  template <class Visit>
  void drain(Visit visit) {
    for (size_t i = 0; i < inline_size_; ++i) visit(*inline_[i].first, inline_[i].second);
    for (auto& [link, sequence] : overflow_) visit(*link, sequence);
    inline_size_ = 0;
    overflow_.clear();
  }

 private:
  static constexpr size_t kInline = 8;
  std::array<std::pair<Link*, uint32_t>, kInline> inline_{};
  size_t inline_size_ = 0;
  std::vector<std::pair<Link*, uint32_t>> overflow_;
};

struct CommunicatorState {
  DeviceContext* ctx = nullptr;
  Waiter* waiter = nullptr;
  const char* op = "";  // the front-end, for messages
  GroupRef group;
  Collective collective = Collective::kAllReduce;
  const RegistryEntry* entry = nullptr;
  size_t segment_bytes = 0;  // 0: one segment per transfer
  PendingSends own_pending;
  PendingSends* pending = &own_pending;  // a subgroup's are its parent's
  bool is_subgroup = false;
};

}  // namespace meshsim
