#include "meshsim/collectives/barrier.h"

#include "meshsim/collectives/algorithms/internal/run_algorithm.h"
#include "meshsim/collectives/internal/meeting.h"

namespace meshsim {

void barrier(DeviceContext& ctx, const AxisNames& axes, const AxisIndexGroups& axis_index_groups,
             std::string_view algorithm) {
  static constexpr const char* kOp = "barrier";
  Meeting meeting(ctx, axes, axis_index_groups, kOp);
  const AlgorithmChoice choice =
      choose_algorithm(ctx, kOp, axes, call_shape(meeting, Collective::kBarrier, 0, 0), algorithm);
  CollectiveCall call(kOp, DType::kFloat32, {});
  call.has_operand = false;  // a mismatch names it "barrier()", not a float32 scalar's
  call.algorithm = choice.name;
  if (!choice.is_direct()) {
    run_algorithm(meeting, choice, Collective::kBarrier, call, BarrierArgs{});
    return;
  }
  meeting.publish(call, nullptr, nullptr);
  meeting.meet();
  meeting.price_all_to_all(0);
}

}  // namespace meshsim
