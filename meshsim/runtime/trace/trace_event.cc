#include "meshsim/runtime/trace/trace_event.h"

namespace meshsim {

std::string_view trace_kind_name(TraceKind kind) {
  switch (kind) {
    case TraceKind::kCollective:
      return "collective";
    case TraceKind::kTransfer:
      return "transfer";
    case TraceKind::kWait:
      return "wait";
    case TraceKind::kCompute:
      return "compute";
  }
  return "unknown";
}

}  // namespace meshsim
