#include "meshsim/runtime/kernel/internal/race_detector.h"

#include <algorithm>
#include <utility>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/kernel/internal/pending_units.h"

namespace meshsim {

void VectorClock::join(const VectorClock& other) {
  for (size_t i = 0; i < c_.size(); ++i) c_[i] = std::max(c_[i], other.c_[i]);
}

RaceDetector::RaceDetector(std::string kernel, std::vector<int> device_ids,
                           std::vector<int> programs)
    : kernel_(std::move(kernel)),
      device_ids_(std::move(device_ids)),
      programs_(std::move(programs)) {}

std::string RaceDetector::actor_name(int actor) const {
  const int n = static_cast<int>(device_ids_.size());
  const int position = actor % n;
  std::string name = actor < n ? "device " : "a DMA started by device ";
  name += std::to_string(device_ids_[position]);
  if (!programs_.empty()) {
    name += " (mpmd_map program ";
    name += std::to_string(programs_[position]);
    name += ')';
  }
  return name;
}

void RaceDetector::access(ShardRaces& races, int owner, int buffer, size_t begin, size_t end,
                          bool write, int actor, const VectorClock& clock, const char* op,
                          std::pair<int, uint32_t> same) const {
  if (begin == end) return;
  const uint32_t epoch = clock[actor];
  std::lock_guard lock(races.mu);
  std::vector<ShardRaces::Access>& history = races.history[buffer];
  for (const ShardRaces::Access& prior : history) {
    const bool overlap = prior.begin < end && begin < prior.end;
    if (!overlap || !(write || prior.write) || prior.epoch <= clock[prior.actor]) continue;
    if (prior.actor == same.first && prior.epoch == same.second) continue;
    const auto bytes = [](size_t b, size_t e) {
      return "bytes [" + std::to_string(b) + ", " + std::to_string(e) + ")";
    };
    throw DataRaceError("data race in kernel '" + kernel_ + "' on buffer " +
                        std::to_string(buffer) + " of device " +
                        std::to_string(device_ids_[owner]) + ": the " + op + " of " +
                        bytes(begin, end) + " by " + actor_name(actor) +
                        " conflicts with the " + prior.op + " of " +
                        bytes(prior.begin, prior.end) + " by " + actor_name(prior.actor) +
                        ", and no semaphore wait orders the two");
  }
  // An earlier access by the same actor that this one covers, of a kind no
  // stronger, can be dropped: whatever races with it races with this one.
  std::erase_if(history, [&](const ShardRaces::Access& prior) {
    return prior.actor == actor && begin <= prior.begin && prior.end <= end &&
           (write || !prior.write);
  });
  history.push_back({actor, epoch, write, begin, end, op});
}

void RaceDetector::signal(ShardRaces& races, int cell, uint32_t units,
                          const VectorClock& clock) const {
  std::lock_guard lock(races.mu);
  races.signals[cell].push_back({units, clock});
}

void RaceDetector::take(ShardRaces& races, int cell, uint32_t units, VectorClock& clock) const {
  std::lock_guard lock(races.mu);
  take_oldest(races.signals[cell], units,
              [&](const ShardRaces::Signal& signal) { clock.join(signal.clock); });
}

}  // namespace meshsim
