#pragma once
// TraceEvent: one thing a device did during a traced launch
// (LaunchOptions::trace) — a collective, a point-to-point transfer, a wait
// for an async result, or annotated compute — with its wall and virtual
// intervals. A launch's events are in LaunchRecord::events; chrome_trace.h
// writes them for Perfetto.

#include <cstdint>
#include <string>
#include <string_view>

namespace meshsim {

enum class TraceKind : uint8_t {
  kCollective,  // a collective front-end: psum, all_gather, ppermute, barrier, ...
  kTransfer,    // a point-to-point transfer: an algorithm's send / recv /
                // sendrecv, or psend / precv
  kWait,        // an async handle's done() ("psum_done", ...), with virtual time
  kCompute,     // DeviceContext::advance ("advance") or compute ("compute"),
                // with virtual time
};

std::string_view trace_kind_name(TraceKind kind);  // "collective", "transfer", ...

struct TraceEvent {
  TraceKind kind = TraceKind::kCollective;
  int device = 0;    // device id
  int core = 0;      // mpmd_map: the function's index among those on its device
  int position = 0;  // in the launch's mesh (row-major)
  // "psum", "all_gather", ...; "send", "recv", "sendrecv", "psend", "precv";
  // "psum_done", ...; "advance", "compute".
  std::string op;
  // The mesh axes of the group, comma-separated ("x", "x,y"): collectives,
  // psend / precv and the transfers inside a collective's algorithm.
  std::string axes;
  int group_size = 0;
  // Collectives: the algorithm that ran and what chose it (CollectiveRecord).
  std::string algorithm;
  std::string chosen_by;
  // Collectives: bytes per member as the algorithm rules see them (the
  // input). Transfers: bytes sent; recv_bytes: bytes received.
  int64_t bytes = 0;
  int64_t recv_bytes = 0;
  // Transfers: the device ids sent to and received from (-1: none).
  int to = -1;
  int from = -1;
  // A transfer's send and its receive share one flow id (non-zero), unique
  // in the launch: flow_out on the sender's event, flow_in on the receiver's.
  uint64_t flow_out = 0;
  uint64_t flow_in = 0;
  // How many of the device's events enclose this one (a transfer inside its
  // collective has depth 1).
  int depth = 0;
  // Ran inside a *_start: with virtual time it runs on the start's own clock,
  // so it may overlap the device's later events.
  bool async = false;
  // Wall time, nanoseconds since the launch began (steady clock).
  int64_t wall_start_ns = 0;
  int64_t wall_end_ns = 0;
  // Virtual time in seconds (0 when the launch keeps none).
  double virtual_start = 0;
  double virtual_end = 0;
};

}  // namespace meshsim
