#include "meshsim/collectives/pbroadcast.h"

#include <optional>
#include <string>

#include "meshsim/collectives/internal/meeting.h"
#include "meshsim/mesh/error.h"

namespace meshsim {

// The direct broadcast.
//
// Words: n = group size, S = bytes of x, source = the rank whose x everyone
// receives.
// Steps: every member publishes its x and its result, and meets. The leader,
// while every member is held, sets each member's result to the source's x — a
// copy of the Array handle, which shares the storage — and releases everybody.
// Cost: 1 barrier; S bytes move to each member logically, none physically; the
// leader makes n handle copies. No departure step: nobody touches a peer's
// Array after the release.
Array pbroadcast(DeviceContext& ctx, const Array& x, AxisNames axes, int source) {
  Meeting meeting(ctx, axes, {}, "pbroadcast");
  if (source < 0 || source >= meeting.size()) {
    throw InvalidArgumentError("pbroadcast over " + axes.to_string() + ": source " +
                               std::to_string(source) + " is out of range [0, " +
                               std::to_string(meeting.size()) + ") for axis size " +
                               std::to_string(meeting.size()));
  }
  std::optional<Array> out;
  meeting.publish(CollectiveCall("pbroadcast", x.dtype(), x.shape()).param("source", source), &x,
                  &out);
  meeting.meet([&] {
    const Array& value = *static_cast<const Array*>(meeting.peer(source).input);
    for (int r = 0; r < meeting.size(); ++r) {
      *static_cast<std::optional<Array>*>(meeting.peer(r).output) = value;
    }
  });
  return *std::move(out);
}

}  // namespace meshsim
