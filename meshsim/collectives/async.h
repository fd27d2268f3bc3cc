#pragma once
// Asynchronous collectives, as JAX's *_start / *_done pairs:
//
//   Pending h = psum_start(ctx, x, "x");
//   ... compute ...
//   Array y = h.done();
//
// A start performs the collective's exchange with its group at once — every
// member meets in the group rendezvous in issue order, exactly as the
// synchronous form — and the handle keeps the result until done() hands it
// over. The device is free to compute between start and done, and any number
// of handles may be pending at once, on the same or different groups. Because
// members meet at start, SPMD programs (every member issues its starts in the
// same order) behave as on hardware; a program whose members issue starts in
// different orders gets the same CollectiveMismatchError or DeadlockError as
// the synchronous form would.
//
// Virtual time (time/virtual_time.h): a start runs the collective on a clock
// of its own that begins at the device's clock, and leaves the device's clock
// where it was; done() moves it to the collective's end if that is later. So
// compute advanced between start and done overlaps the communication: the
// pair costs max(compute, collective), not the sum.
//
// In a trace (LaunchOptions::trace), a start's events are marked async, and
// with virtual time done() records a kWait event "<op>_done" from the clock
// it found to the clock it left.

#include <memory>
#include <optional>

#include <span>
#include <string_view>
#include <utility>

#include "meshsim/collectives/all_gather.h"
#include "meshsim/collectives/all_to_all.h"
#include "meshsim/collectives/pbroadcast.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/collectives/psum_scatter.h"
#include "meshsim/collectives/reductions.h"
#include "meshsim/runtime/array/array.h"

namespace meshsim {

class Pending {
 public:
  explicit Pending(Array result, const char* op) : result_(std::move(result)), op_(op) {}
  // When the launch keeps virtual time: the device, a token alive while the
  // launch holds its devices, and the collective's end (a clock reading).
  Pending(Array result, const char* op, DeviceContext& ctx, std::weak_ptr<const void> launch,
          double end)
      : result_(std::move(result)), op_(op), ctx_(&ctx), launch_(std::move(launch)), end_(end) {}
  // A moved-from handle is done: its done() is a RuntimeUsageError.
  Pending(Pending&& other) noexcept
      : result_(std::exchange(other.result_, std::nullopt)),
        op_(other.op_),
        ctx_(other.ctx_),
        launch_(std::move(other.launch_)),
        end_(other.end_) {}
  Pending& operator=(Pending&& other) noexcept {
    if (this == &other) return *this;
    result_ = std::exchange(other.result_, std::nullopt);
    op_ = other.op_;
    ctx_ = other.ctx_;
    launch_ = std::move(other.launch_);
    end_ = other.end_;
    return *this;
  }

  // The collective's result. RuntimeUsageError on a second call (or on a
  // moved-from handle), and, when the launch keeps virtual time, after that
  // launch ended or from anywhere but the device's own body.
  Array done();
  bool is_done() const { return !result_.has_value(); }

 private:
  std::optional<Array> result_;
  const char* op_;
  DeviceContext* ctx_ = nullptr;  // set only when the launch keeps virtual time
  std::weak_ptr<const void> launch_;
  double end_ = 0;
};

// Same parameters and errors as the synchronous forms, `algorithm` (or the
// options' algorithm) included. ppermute has one schedule (each pair is one
// transfer), so it has no algorithm to choose.
Pending psum_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                   const AxisIndexGroups& axis_index_groups = {},
                   std::string_view algorithm = {});
Pending all_gather_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                         const AllGatherOptions& options = {});
Pending psum_scatter_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                           const PsumScatterOptions& options = {});
Pending all_to_all_start(DeviceContext& ctx, const Array& x, const AxisNames& axes, int split_axis,
                         int concat_axis, const AllToAllOptions& options = {});
Pending pbroadcast_start(DeviceContext& ctx, const Array& x, const AxisNames& axes, int source,
                         std::string_view algorithm = {});
Pending ppermute_start(DeviceContext& ctx, const Array& x, const AxisNames& axes,
                       ArgSpan<std::pair<int, int>> perm);

}  // namespace meshsim
