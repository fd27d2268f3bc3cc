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
//   m.publish(CollectiveCall("all_gather", x.dtype(), x.shape()).param("tiled", 1), in, out);
//   m.meet();            // checks the calls match, then everyone proceeds
//   ... read m.peer(r).input ...
//   m.arrive();          // departure: nobody reads our buffers any more
// Buffers published must stay valid until the member's last arrive().

#include "meshsim/collectives/internal/axis_checks.h"
#include "meshsim/mesh/axis_groups.h"
#include "meshsim/runtime/comm/axis_names.h"
#include "meshsim/runtime/comm/internal/collective_call.h"
#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"
#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/comm/internal/rendezvous.h"

namespace meshsim {

class Meeting {
 public:
  Meeting(DeviceContext& ctx, AxisNames axes, const AxisIndexGroups& index_groups, const char* op)
      : ctx_(ctx),
        group_(detail::group_for(ctx, axes, index_groups, op)),
        scope_(ctx, op, group_.rendezvous) {}

  int size() const { return group_.rendezvous->size(); }
  int rank() const { return group_.rank; }
  const GroupSet& group_set() const { return *group_.set; }
  Rendezvous& rendezvous() { return *group_.rendezvous; }
  const GroupRef& group() const { return group_; }
  DeviceContext& context() { return ctx_; }

  void publish(const CollectiveCall& call, const void* input, void* output,
               const void* extra = nullptr) {
    group_.rendezvous->slot(group_.rank).publish(call, input, output, extra);
  }
  const Rendezvous::Slot& peer(int rank) const { return group_.rendezvous->slot(rank); }

  // The first meeting: see Rendezvous::meet.
  void meet(FunctionRef<void()> leader_step) { group_.rendezvous->meet(DeviceHooks::waiter(ctx_), leader_step); }
  void meet() { group_.rendezvous->meet(DeviceHooks::waiter(ctx_)); }
  // A further barrier (phase boundary or departure).
  void arrive() { group_.rendezvous->arrive(DeviceHooks::waiter(ctx_)); }

  // The schedule most direct collectives share, given `work(rank, output)`
  // that computes member `rank`'s result into `output` from the peers'
  // published inputs:
  // - small (`leader_bytes` <= kLeaderBytes, the bytes the leader would
  //   touch): the last member to arrive does every member's work before it
  //   releases the group — 1 barrier;
  // - large: each member does its own work after the meeting, then meets again
  //   (departure) so no input is released while a peer reads it — 2 barriers.
  static constexpr size_t kLeaderBytes = 64 * 1024;
  void run_direct(size_t leader_bytes, FunctionRef<void(int rank, void* output)> work) {
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

 private:
  DeviceContext& ctx_;
  GroupRef group_;
  OpScope scope_;
};

}  // namespace meshsim
