#pragma once
// CollectiveRecord: what one collective call of a device ran — the front-end,
// the algorithm and what chose it — kept per device for the current launch
// (DeviceContext::collective_records), so a test can assert what
// communicated and the CLI can print it.

#include <cstddef>
#include <string_view>

namespace meshsim {

struct CollectiveRecord {
  std::string_view collective;  // the front-end: "psum", "all_gather", ...
  std::string_view algorithm;   // "direct", "ring", ...
  // What chose it: "default", "call", "auto", "MESHSIM_ALGO: psum:ring:64K-",
  // "rule 1", or "fallback" (a forced algorithm whose precondition failed).
  std::string_view chosen_by;
  int group_size = 0;
  size_t bytes = 0;  // per member, as the rules see them
};

}  // namespace meshsim
