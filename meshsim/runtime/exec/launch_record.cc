#include "meshsim/runtime/exec/launch_record.h"

#include <algorithm>

namespace meshsim {

double LaunchRecord::makespan() const {
  return end_times.empty() ? 0.0 : *std::max_element(end_times.begin(), end_times.end());
}

std::vector<const TraceEvent*> LaunchRecord::events_of(int position, TraceKind kind,
                                                       std::string_view op) const {
  std::vector<const TraceEvent*> found;
  for (const TraceEvent& e : events) {
    if (e.position == position && e.kind == kind && (op.empty() || e.op == op)) {
      found.push_back(&e);
    }
  }
  return found;
}

}  // namespace meshsim
