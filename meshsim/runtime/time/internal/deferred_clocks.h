#pragma once
// DeferredClocks: every clock of a launch that recorded its devices' steps
// (clock_log.h), evaluated once it ended — a discrete-event replay that
// prices each transfer in order of virtual time.
//
// A step's time follows from the steps it depends on: its base (and, for a
// join, the step joined) and, for a receive, the arrival of its transfer,
// which departs at the sender's step. The replay evaluates every step whose
// inputs are known; a transfer is issued when its sender's step is known.
// When nothing more can be evaluated, every step still unknown waits on some
// issued transfer, so it lies at or after the earliest departure issued: no
// transfer still to come departs before it. That transfer is priced next.
// Hence a congestion-aware model sees departures in non-decreasing order,
// in canonical order except where a transfer's departure equals an arrival
// (a zero-cost route) it causally follows. The replay is a function of the
// logs alone: the same program gives the same times on every run.

#include <cstdint>
#include <exception>
#include <memory>
#include <vector>

#include "meshsim/runtime/time/external_clock.h"
#include "meshsim/runtime/time/internal/clock_log.h"
#include "meshsim/runtime/time/network_model.h"

namespace meshsim {

class DeferredClocks {
 public:
  // `logs`, `nodes` (topology node) and `devices` (device id, for messages)
  // by mesh position. The logs must outlive this object.
  DeferredClocks(const std::vector<ClockLog>& logs, std::vector<int> nodes,
                 std::vector<int> devices);
  ~DeferredClocks();

  // Evaluates every step, pricing the transfers with `model` (reset first).
  // Throws what the model throws, and InvalidArgumentError naming the
  // device whose clock became non-finite.
  void price(NetworkModel& model);
  // The same with the transfers carried by an external simulator
  // (external_clock.h): errors as described there.
  void price(ExternalClock& clock);

  // Seconds of virtual time of a reading (a step index) of `position`'s
  // clock; after price().
  double seconds(int position, double reading) const;

 private:
  // A transfer whose departure is known, ordered canonically
  // (network_model.h); its sequence is its receive step's global index,
  // fixed by the program.
  struct IssuedTransfer {
    Transfer transfer;
    bool operator>(const IssuedTransfer& o) const;
  };
  struct ExternalRun;

  int64_t global(int position, int32_t step) const { return offset_[position] + step; }
  int position_of(int64_t step) const;
  Transfer transfer_of(int64_t receive) const;
  Transfer transfer_of(int64_t receive, int position) const;  // `receive` is `position`'s
  void build();
  // Evaluates every step whose inputs are known; the transfers whose
  // departure became known are appended to issued_.
  void drain();
  void evaluate(int64_t step);
  // The transfer of receive step `receive` arrived at `arrival`.
  void resolve(int64_t receive, double arrival);
  // InvalidArgumentError (`what`: who priced) naming a transfer still awaited.
  void check_all_evaluated(const std::string& what) const;
  // The external simulator's side: schedules the departures issued_ holds,
  // in canonical order; takes an arrival.
  static void schedule_issued(const std::shared_ptr<ExternalRun>& run);
  void deliver(const std::shared_ptr<ExternalRun>& run, int64_t receive, double sent_at);

  const std::vector<ClockLog>& logs_;
  std::vector<int> nodes_;
  std::vector<int> devices_;
  std::vector<int64_t> offset_;    // first global index of each position; back() = total
  std::vector<double> time_;       // by global index, once evaluated
  std::vector<double> arrival_;    // by global index of a receive, once priced
  std::vector<uint8_t> missing_;   // inputs not yet known
  std::vector<int64_t> users_begin_, users_;          // steps waiting on a step (CSR)
  std::vector<int64_t> receivers_begin_, receivers_;  // receives a step's transfers feed (CSR)
  std::vector<int> receiver_positions_;               // beside receivers_
  std::vector<int64_t> ready_;
  std::vector<IssuedTransfer> issued_;
  int64_t evaluated_ = 0;
};

}  // namespace meshsim
