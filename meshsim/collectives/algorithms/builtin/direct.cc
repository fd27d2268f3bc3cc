// "direct": every collective's default, run natively by its front-end
// (collectives/*.cc and collectives/internal/all_reduce.cc state the steps).
// Members publish their buffers and meet; each reads its peers' inputs in
// place (zero copy), or the last member to arrive does everybody's work when
// the whole exchange is small (Meeting::run_direct). There is no
// point-to-point step, so in α-β-γ terms a meeting counts as one α and every
// byte a member reads from an input (in place, its own included) or writes
// into a peer's output as β.
//
// Words: n = group size, S = per-member bytes (CallShape::bytes).

#include "meshsim/collectives/algorithms/internal/builtin.h"
#include "meshsim/collectives/internal/meeting.h"

namespace meshsim::builtin {
namespace {

// 1 meeting when the leader does everything, else the meeting, the phase
// barriers and the departure.
double meetings(double small_bytes, int large) {
  return small_bytes <= static_cast<double>(Meeting::kLeaderBytes) ? 1 : large;
}

template <class Args>
Algorithm<Args> direct(std::string description, std::string formula,
                       std::function<CostTerms(const CallShape&)> cost) {
  Algorithm<Args> a;
  a.name = "direct";
  a.description = std::move(description);
  a.cost_formula = std::move(formula);
  a.cost = std::move(cost);
  return a;
}

}  // namespace

Algorithm<AllReduceArgs> all_reduce_direct() {
  return direct<AllReduceArgs>(
      "shared memory: each member reduces its 1/n slice over all inputs read in place and "
      "writes it into every member's output (the leader does all when small)",
      "2α + (2n-1)/n·Sβ + (n-1)/n·Sγ  (1α when n·S <= 64 KiB)", [](const CallShape& s) {
        const double n = s.group_size, S = static_cast<double>(s.bytes);
        // β: its slice of every input, read, and its slice to every peer, written.
        return CostTerms{meetings(n * S, 2), (2 * n - 1) / n * S, (n - 1) / n * S};
      });
}

Algorithm<AllGatherArgs> all_gather_direct() {
  return direct<AllGatherArgs>(
      "shared memory: each member copies every input, read in place, into its output",
      "2α + n·Sβ  (1α when n²·S <= 64 KiB)", [](const CallShape& s) {
        const double n = s.group_size, S = static_cast<double>(s.bytes);
        return CostTerms{meetings(n * n * S, 2), n * S, 0};
      });
}

Algorithm<ReduceScatterArgs> reduce_scatter_direct() {
  return direct<ReduceScatterArgs>(
      "shared memory: each member reduces its own block over all inputs read in place",
      "2α + Sβ + (n-1)/n·Sγ  (1α when n·S <= 64 KiB)", [](const CallShape& s) {
        const double n = s.group_size, S = static_cast<double>(s.bytes);
        return CostTerms{meetings(n * S, 2), S, (n - 1) / n * S};
      });
}

Algorithm<AllToAllArgs> all_to_all_direct() {
  return direct<AllToAllArgs>(
      "shared memory: each member copies its block from every input, read in place",
      "2α + Sβ  (1α when n·S <= 64 KiB)", [](const CallShape& s) {
        const double n = s.group_size, S = static_cast<double>(s.bytes);
        return CostTerms{meetings(n * S, 2), S, 0};
      });
}

Algorithm<RaggedAllToAllArgs> ragged_all_to_all_direct() {
  return direct<RaggedAllToAllArgs>(
      "shared memory: each member copies the slices addressed to it from every operand, read "
      "in place",
      "2α + Sβ  (S: the rows a member receives, at most the operand's bytes)",
      [](const CallShape& s) { return CostTerms{2, static_cast<double>(s.bytes), 0}; });
}

Algorithm<BroadcastArgs> broadcast_direct() {
  return direct<BroadcastArgs>(
      "shared memory: every member copies the root's input, read in place",
      "2α + Sβ  (1α when n·S <= 64 KiB)", [](const CallShape& s) {
        const double n = s.group_size, S = static_cast<double>(s.bytes);
        return CostTerms{meetings(n * S, 2), S, 0};
      });
}

Algorithm<BarrierArgs> barrier_direct() {
  return direct<BarrierArgs>("shared memory: one meeting of the group's rendezvous", "α",
                             [](const CallShape&) { return CostTerms{1, 0, 0}; });
}

}  // namespace meshsim::builtin
