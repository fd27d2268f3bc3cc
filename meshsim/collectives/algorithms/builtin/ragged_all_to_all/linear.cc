// ragged_all_to_all linear: every send posted at once, then every receive.
//
// Words: n = group size, r = rank, spd = slices per peer, R = bytes of a row,
// S = bytes of a member's operand. A header is a member's spd landings
// {output offset, size} for one peer.
// Post the headers to the n-1 peers, receive theirs. Pack my slices for each
// peer into one contiguous message (in slice order) and post the n-1 messages
// (one descriptor each: no send waits for a receive); receive the n-1
// messages into a staging buffer, in (sender, slice) order, my own copied in
// place; then write every staged slice to its landing in sender order
// (direct's rule where landings overlap: the higher rank wins).
// Cost: 2(n-1)α + (n-1)/n·Sβ for balanced slices, plus a pack and an unpack
// of S bytes on each member.

#include <cstring>
#include <vector>

#include "meshsim/collectives/algorithms/builtin/ragged_all_to_all/internal/slices.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<RaggedAllToAllArgs> ragged_all_to_all_linear() {
  using ragged_slices::Landing;
  Algorithm<RaggedAllToAllArgs> a;
  a.name = "linear";
  a.description =
      "headers, then one packed message to every peer posted at once, then every receive; "
      "unpacked in sender order";
  a.cost_formula = "2(n-1)α + (n-1)/n·Sβ, plus a pack and an unpack of S";
  a.cost = [](const CallShape& s) {
    const double n = s.group_size;
    return CostTerms{2 * (n - 1), (n - 1) / n * static_cast<double>(s.bytes), 0};
  };
  a.run = [](Communicator& comm, const RaggedAllToAllArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const int64_t spd = args.slices_per_peer;
    const size_t R = args.row_bytes;
    ragged_slices::Headers headers(comm, args);
    const std::span<const Landing> outgoing = headers.outgoing;
    const std::vector<Landing>& incoming = headers.incoming;
    for (int k = 1; k < n; ++k) {
      const int to = detail::mod(r + k, n);
      comm.send(to, headers.to(to, spd), headers.bytes);
    }
    for (int k = 1; k < n; ++k) {
      const int from = detail::mod(r - k, n);
      comm.recv(from, headers.from(from, spd), headers.bytes);
    }
    ragged_slices::report_sizes(incoming, args);

    // My slices packed by peer, in (peer, slice) order, as the receivers
    // stage them: the packing is staging_for() of my outgoing landings.
    const ragged_slices::Staging packing = ragged_slices::staging_for(outgoing);
    std::byte* const packed = comm.scratch(packing.rows * R);
    const auto* in = static_cast<const std::byte*>(args.in);
    for (size_t e = 0; e < outgoing.size(); ++e) {
      if (outgoing[e].size > 0 && R > 0) {
        std::memcpy(packed + packing.begin[e] * R, in + args.input_offsets[e] * R,
                    outgoing[e].size * R);
      }
    }
    // Rows of the slices from / to peer j: [j·spd, (j+1)·spd) of a staging.
    const auto peer_rows = [spd](std::span<const Landing> landings, int j) {
      int64_t rows = 0;
      for (int64_t t = 0; t < spd; ++t) rows += landings[j * spd + t].size;
      return rows;
    };
    const ragged_slices::Staging staging = ragged_slices::staging_for(incoming);
    std::vector<std::byte> staged(staging.rows * R);
    if (const int64_t own = peer_rows(outgoing, r); own > 0 && R > 0) {
      std::memcpy(staged.data() + staging.begin[r * spd] * R,
                  packed + packing.begin[r * spd] * R, own * R);
    }
    for (int k = 1; k < n; ++k) {
      const int to = detail::mod(r + k, n);
      comm.send(to, packed + packing.begin[to * spd] * R, peer_rows(outgoing, to) * R);
    }
    for (int k = 1; k < n; ++k) {
      const int from = detail::mod(r - k, n);
      comm.recv(from, staged.data() + staging.begin[from * spd] * R,
                peer_rows(incoming, from) * R);
    }
    ragged_slices::unstage(incoming, staging, staged.data(), static_cast<std::byte*>(args.out), R);
  };
  return a;
}

}  // namespace meshsim::builtin
