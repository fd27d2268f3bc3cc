#include "meshsim/collectives/send_recv.h"

#include <optional>
#include <string>

#include "meshsim/collectives/internal/axis_checks.h"
#include "meshsim/collectives/ppermute.h"
#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/internal/device_hooks.h"

namespace meshsim {

Token psend(DeviceContext& ctx, const Array& x, const AxisNames& axes,
            ArgSpan<std::pair<int, int>> perm, Token /*after*/) {
  const GroupRef group = detail::group_for(ctx, axes, {}, "psend");
  OpScope scope(ctx, "psend", group, TraceKind::kTransfer);
  const int destination =
      detail::perm_route(perm, group.rank, group.rendezvous->size(), "psend", axes).destination;
  // A copy: the message must not share storage with x, which the sender may
  // still write through a span it took before (copy-on-write cannot see that).
  if (destination >= 0) {
    const std::span<const int> ids = group.rendezvous->agent_ids();
    group.messages_sent->store(true, std::memory_order_relaxed);
    if (RawTraceEvent* e = scope.event()) {
      e->to = group.rendezvous->device_ids()[destination];
      e->bytes = static_cast<int64_t>(x.nbytes());
    }
    const std::optional<LinkStamp> stamp = DeviceHooks::stamp(ctx, scope.event());
    group.fabric->link(ids[group.rank], ids[destination], Fabric::Lane::kMessages)
        .post(DeviceHooks::waiter(ctx), x.clone(), stamp);
  }
  return {};
}

Array precv(DeviceContext& ctx, Token /*after*/, Shape shape, DType dtype, const AxisNames& axes,
            ArgSpan<std::pair<int, int>> perm) {
  try {
    (void)num_elements(shape);  // the shape expected: checked even where nothing is sent
  } catch (ShapeError& e) {
    e.add_context("precv over " + axes.to_string());
    throw;
  }
  const GroupRef group = detail::group_for(ctx, axes, {}, "precv");
  OpScope scope(ctx, "precv", group, TraceKind::kTransfer);
  const int source =
      detail::perm_route(perm, group.rank, group.rendezvous->size(), "precv", axes).source;
  if (source < 0) return Array::zeros(std::move(shape), dtype);
  const std::span<const int> ids = group.rendezvous->agent_ids();
  Link& link = group.fabric->link(ids[source], ids[group.rank], Fabric::Lane::kMessages);
  link.next(DeviceHooks::waiter(ctx));
  Array message = link.take_message();
  DeviceClock& clock = DeviceHooks::clock(ctx);
  const LinkStamp stamp = DeviceHooks::stamped(ctx) ? link.stamp() : LinkStamp{};
  link.release();
  if (clock.on()) {
    clock.receive(ids[source], ids[group.rank], static_cast<int64_t>(message.nbytes()),
                  stamp.departure);
  }
  if (RawTraceEvent* e = scope.event()) {
    e->from = group.rendezvous->device_ids()[source];
    e->recv_bytes = static_cast<int64_t>(message.nbytes());
    e->flow_in = stamp.flow;
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
