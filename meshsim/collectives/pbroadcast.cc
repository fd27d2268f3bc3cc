#include "meshsim/collectives/pbroadcast.h"

#include <cstring>
#include <string>

#include "meshsim/collectives/algorithms/internal/run_algorithm.h"
#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/mesh/error.h"

namespace meshsim {

// The direct broadcast.
//
// Words: n = group size, S = bytes of x, source = the rank whose x everyone
// receives.
// Every member allocates its own result and publishes it with its x; each
// result is then a copy of the source's x (Meeting::run_direct: a shared copy
// in a small group when S is small; otherwise read in place, by the leader
// for everybody when n·S is small, else by each member, which then departs).
// No result shares storage with the source's x (not even the source's own):
// the source could otherwise write into the results, after the collective,
// through a span it took before.
// Cost: 1 meeting (small) or 2; S bytes copied per member.
Array pbroadcast(DeviceContext& ctx, const Array& x, const AxisNames& axes, int source,
                 std::string_view algorithm) {
  Meeting meeting(ctx, axes, {}, "pbroadcast");
  if (source < 0 || source >= meeting.size()) {
    throw InvalidArgumentError("pbroadcast over " + axes.to_string() + ": source " +
                               std::to_string(source) + " is out of range [0, " +
                               std::to_string(meeting.size()) + ") for axis size " +
                               std::to_string(meeting.size()));
  }
  Array out = Array::empty_like(x, x.dtype());
  const size_t nbytes = x.nbytes();
  const AlgorithmChoice choice = choose_algorithm(
      ctx, "pbroadcast", axes,
      call_shape(meeting, Collective::kBroadcast, nbytes, x.size()), algorithm);
  CollectiveCall call("pbroadcast", x.dtype(), x.shape());
  call.param("source", source);
  call.algorithm = choice.name;
  if (!choice.is_direct()) {
    run_algorithm(meeting, choice, Collective::kBroadcast, call,
                  BroadcastArgs{x.bytes(), out.mutable_bytes(), nbytes, source});
    return out;
  }
  meeting.publish(call, x.bytes(), out.mutable_bytes());
  meeting.run_direct(nbytes, static_cast<size_t>(meeting.size()) * nbytes, [&](int, void* output) {
    if (nbytes > 0) std::memcpy(output, meeting.input(source), nbytes);
  });
  meeting.price([&](int r) { return r == source ? static_cast<int64_t>(nbytes) : -1; });
  return out;
}

}  // namespace meshsim
