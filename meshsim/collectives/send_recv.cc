#include "meshsim/collectives/send_recv.h"

#include <optional>
#include <string>

#include "meshsim/collectives/internal/axis_checks.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"

namespace meshsim {

Token psend(DeviceContext& ctx, const Array& x, AxisNames axes,
            ArgSpan<std::pair<int, int>> perm, Token /*after*/) {
  const GroupRef group = detail::group_for(ctx, axes, {}, "psend");
  const OpScope scope(ctx, "psend", group.rendezvous);
  const int destination =
      detail::perm_route(perm, group.rank, group.rendezvous->size(), "psend", axes).destination;
  // A copy: the message must not share storage with x, which the sender may
  // still write through a span it took before (copy-on-write cannot see that).
  if (destination >= 0) {
    const std::span<const int> ids = group.rendezvous->device_ids();
    group.messages_sent->store(true, std::memory_order_relaxed);
    const DeviceClock& clock = DeviceHooks::clock(ctx);
    group.fabric->link(ids[group.rank], ids[destination], Fabric::Lane::kMessages)
        .post(DeviceHooks::waiter(ctx), x.clone(),
              clock.on() ? std::optional<double>(clock.now) : std::nullopt);
  }
  return {};
}

Array precv(DeviceContext& ctx, Token /*after*/, Shape shape, DType dtype, AxisNames axes,
            ArgSpan<std::pair<int, int>> perm) {
  const GroupRef group = detail::group_for(ctx, axes, {}, "precv");
  const OpScope scope(ctx, "precv", group.rendezvous);
  const int source =
      detail::perm_route(perm, group.rank, group.rendezvous->size(), "precv", axes).source;
  if (source < 0) return Array::zeros(std::move(shape), dtype);
  const std::span<const int> ids = group.rendezvous->device_ids();
  Link& link = group.fabric->link(ids[source], ids[group.rank], Fabric::Lane::kMessages);
  link.next(DeviceHooks::waiter(ctx));
  Array message = link.take_message();
  DeviceClock& clock = DeviceHooks::clock(ctx);
  const double departure = clock.on() ? link.departure() : 0;
  link.release();
  if (clock.on()) {
    clock.receive(ids[source], ids[group.rank], static_cast<int64_t>(message.nbytes()), departure);
  }
  if (message.dtype() != dtype || message.shape() != shape) {
    const std::string what =
        "precv over " + axes.to_string() + " on axis index " + std::to_string(group.rank) +
        " expected " + std::string(dtype_name(dtype)) + shape_to_string(shape) +
        " but axis index " + std::to_string(source) + " (device " +
        std::to_string(group.rendezvous->device_ids()[source]) + ") sent " +
        std::string(dtype_name(message.dtype())) + shape_to_string(message.shape());
    if (message.dtype() != dtype) throw DTypeError(what);
    throw CollectiveShapeError(what);
  }
  return message;
}

}  // namespace meshsim
