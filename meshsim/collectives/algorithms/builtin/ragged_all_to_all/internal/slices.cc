#include "meshsim/collectives/algorithms/builtin/ragged_all_to_all/internal/slices.h"

#include <algorithm>
#include <cstring>

namespace meshsim::ragged_slices {

Headers::Headers(Communicator& comm, const RaggedAllToAllArgs& args)
    : incoming(static_cast<size_t>(comm.size() * args.slices_per_peer)),
      bytes(static_cast<size_t>(args.slices_per_peer) * sizeof(Landing)) {
  // Scratch blocks come from operator new[], aligned for any Landing.
  auto* sent = reinterpret_cast<Landing*>(comm.scratch(incoming.size() * sizeof(Landing)));
  outgoing = {sent, incoming.size()};
  for (size_t e = 0; e < outgoing.size(); ++e) {
    outgoing[e] = {args.output_offsets[e], args.send_sizes[e]};
  }
  const int64_t spd = args.slices_per_peer;
  std::copy_n(&outgoing[comm.rank() * spd], spd, &incoming[comm.rank() * spd]);
}

bool overlap(std::span<const Landing> landings) {
  std::vector<Landing> sorted;
  for (const Landing& l : landings) {
    if (l.size > 0) sorted.push_back(l);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Landing& a, const Landing& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i].offset < sorted[i - 1].offset + sorted[i - 1].size) return true;
  }
  return false;
}

Staging staging_for(std::span<const Landing> incoming) {
  Staging s;
  s.begin.reserve(incoming.size());
  for (const Landing& l : incoming) {
    s.begin.push_back(s.rows);
    s.rows += l.size;
  }
  return s;
}

void unstage(std::span<const Landing> incoming, const Staging& staging, const std::byte* staged,
             std::byte* out, size_t row_bytes) {
  for (size_t e = 0; e < incoming.size(); ++e) {
    const size_t bytes = static_cast<size_t>(incoming[e].size) * row_bytes;
    if (bytes > 0) {
      std::memcpy(out + incoming[e].offset * row_bytes, staged + staging.begin[e] * row_bytes,
                  bytes);
    }
  }
}

void report_sizes(std::span<const Landing> incoming, const RaggedAllToAllArgs& args) {
  for (size_t e = 0; e < incoming.size(); ++e) args.received_sizes[e] = incoming[e].size;
}

}  // namespace meshsim::ragged_slices
