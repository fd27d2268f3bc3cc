// ragged_all_to_all pairwise exchange.
//
// Words: n = group size, r = rank, spd = slices per peer, R = bytes of a row,
// S = bytes of a member's operand. A header is a member's spd landings
// {output offset, size} for one peer.
// Step 0 (headers): n-1 steps, step k exchanging headers with the members at
// distance ±k (sendrecv of spd·16 bytes each way), so every member knows
// where each incoming slice lands and how long it is.
// Step 1 (rows): steps k = 1..n-1, each spd sendrecvs with the members at
// distance ±k: my slice t for member r+k against member r-k's slice t for me,
// of different sizes each way. Slices land in `out` directly; if any two
// incoming landings overlap, they land in a staging buffer first and are
// written in sender order at the end (direct's rule: the higher rank wins).
// The own slices are copied locally.
// Cost: (n-1)(1+spd)α + (n-1)/n·Sβ for balanced slices.

#include <cstring>
#include <vector>

#include "meshsim/collectives/algorithms/builtin/ragged_all_to_all/internal/slices.h"
#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/algorithms/internal/rank_math.h"

namespace meshsim::builtin {

Algorithm<RaggedAllToAllArgs> ragged_all_to_all_pairwise() {
  using ragged_slices::Landing;
  Algorithm<RaggedAllToAllArgs> a;
  a.name = "pairwise";
  a.description =
      "headers, then n-1 steps exchanging the slices with the members at distance ±k (staged "
      "when landings overlap)";
  a.cost_formula = "(n-1)(1+spd)α + (n-1)/n·Sβ, spd = slices per peer";
  a.cost = [](const CallShape& s) {
    const double n = s.group_size;
    const double spd = static_cast<double>(s.count) / n;
    return CostTerms{(n - 1) * (1 + spd), (n - 1) / n * static_cast<double>(s.bytes), 0};
  };
  a.run = [](Communicator& comm, const RaggedAllToAllArgs& args) {
    const int n = comm.size();
    const int r = comm.rank();
    const int64_t spd = args.slices_per_peer;
    const size_t R = args.row_bytes;
    ragged_slices::Headers headers(comm, args);
    const std::vector<Landing>& incoming = headers.incoming;
    for (int k = 1; k < n; ++k) {
      const int to = detail::mod(r + k, n), from = detail::mod(r - k, n);
      comm.sendrecv(to, headers.to(to, spd), from, headers.from(from, spd), headers.bytes);
    }
    ragged_slices::report_sizes(incoming, args);

    // Where incoming slice e goes: its landing, or its place in staging.
    const bool staged = ragged_slices::overlap(incoming);
    const ragged_slices::Staging staging =
        staged ? ragged_slices::staging_for(incoming) : ragged_slices::Staging{};
    std::vector<std::byte> staging_rows(staged ? staging.rows * R : 0);
    auto* out = static_cast<std::byte*>(args.out);
    const auto destination = [&](int64_t e) {
      return staged ? staging_rows.data() + staging.begin[e] * R : out + incoming[e].offset * R;
    };
    const auto* in = static_cast<const std::byte*>(args.in);
    const auto source = [&](int64_t e) { return in + args.input_offsets[e] * R; };

    for (int64_t t = 0; t < spd; ++t) {
      const int64_t e = r * spd + t;
      const size_t bytes = static_cast<size_t>(args.send_sizes[e]) * R;
      if (bytes > 0) std::memcpy(destination(e), source(e), bytes);
    }
    for (int k = 1; k < n; ++k) {
      const int to = detail::mod(r + k, n), from = detail::mod(r - k, n);
      for (int64_t t = 0; t < spd; ++t) {
        const int64_t send = to * spd + t, receive = from * spd + t;
        comm.sendrecv(to, source(send), static_cast<size_t>(args.send_sizes[send]) * R, from,
                      destination(receive), static_cast<size_t>(incoming[receive].size) * R);
      }
    }
    if (staged) ragged_slices::unstage(incoming, staging, staging_rows.data(), out, R);
  };
  return a;
}

}  // namespace meshsim::builtin
