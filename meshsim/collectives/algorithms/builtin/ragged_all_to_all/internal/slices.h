#pragma once
// What the ragged all-to-all algorithms share: the header a member sends each
// peer before the rows (where each slice lands and how long it is), the
// incoming landings that headers describe, and the in-order write of staged
// slices that keeps direct's rule on overlapping landings.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "meshsim/collectives/algorithms/algorithm_args.h"
#include "meshsim/collectives/algorithms/communicator.h"

namespace meshsim::ragged_slices {

// One slice as its receiver sees it: `offset` and `size` in rows of its out.
struct Landing {
  int64_t offset = 0;
  int64_t size = 0;
};

// The headers of one member. `outgoing`: its landings on every peer, peer j's
// spd of them at [j·spd, +spd) (its output_offsets and send_sizes), what it
// sends peer j, in the call's scratch (read in place). `incoming`: the
// landings of the slices it receives, sender s's at [s·spd, +spd); its own
// block is filled in, the algorithm receives the others (`bytes` each).
struct Headers {
  Headers(Communicator& comm, const RaggedAllToAllArgs& args);
  std::span<Landing> outgoing;
  std::vector<Landing> incoming;
  size_t bytes = 0;
  Landing* to(int peer, int64_t spd) { return &outgoing[peer * spd]; }
  Landing* from(int peer, int64_t spd) { return &incoming[peer * spd]; }
};

// Whether two non-empty landings share a row.
bool overlap(std::span<const Landing> landings);

// Where each incoming slice sits in a staging buffer that holds them all in
// (sender, slice) order, and that buffer's size, in rows.
struct Staging {
  std::vector<int64_t> begin;  // parallel to the landings
  int64_t rows = 0;
};
Staging staging_for(std::span<const Landing> incoming);

// Writes every staged slice to its landing in `out`, in (sender, slice)
// order, so where landings overlap the higher sender rank wins.
void unstage(std::span<const Landing> incoming, const Staging& staging, const std::byte* staged,
             std::byte* out, size_t row_bytes);

// received_sizes[e] = incoming[e].size.
void report_sizes(std::span<const Landing> incoming, const RaggedAllToAllArgs& args);

}  // namespace meshsim::ragged_slices
