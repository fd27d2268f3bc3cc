#pragma once
// ClockLog: a device's clock in a launch whose transfers are priced after it
// ends (a congestion-aware model, an external simulator). Devices run at
// once in no fixed order, but such a network must see transfers in the
// order of virtual time, so a device cannot know its clock while it runs.
// It records instead how its clock moves, step by step: the step's time is
// a function of earlier steps of the device, and of the arrival of a
// transfer for a receive (deferred_clocks.h prices them once the launch
// ended). A clock reading is then a step's index (exact in a double).

#include <cstdint>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/time/internal/seconds_text.h"

namespace meshsim {

// InvalidArgumentError: device `device`'s clock at `before` seconds,
// advanced by `seconds`, is not finite (the network model would reject it on
// some peer: name this device instead).
[[noreturn]] inline void throw_non_finite_clock(int device, double before, double seconds) {
  InvalidArgumentError error("its virtual clock (" + seconds_text(before) + " s) advanced by " +
                             seconds_text(seconds) + " s is not finite");
  error.set_device(device);
  throw error;
}

struct ClockStep {
  // kLocal: what another core of the device sent lands `seconds` after the
  // sender's step, with no network (mpmd_map's functions on one device).
  enum class Kind : uint8_t { kStart, kAdvance, kReceive, kJoin, kLocal };
  Kind kind = Kind::kStart;
  int32_t base = 0;    // the step the clock was at (an earlier index)
  int32_t other = 0;   // kReceive, kLocal: the sender's step it departed at; kJoin: the step joined
  int32_t source = 0;  // kReceive, kLocal: the sender's mesh position
  int64_t bytes = 0;   // kReceive
  double seconds = 0;  // kAdvance, kLocal
};
static_assert(sizeof(ClockStep) == 32, "a step is half a cache line");

class ClockLog {
 public:
  // Empty but for step 0 (time 0); at most `limit` steps, for `device`.
  void begin(int device, int64_t limit) {
    steps_.clear();
    steps_.push_back(ClockStep{});
    device_ = device;
    limit_ = limit;
  }
  const std::vector<ClockStep>& steps() const { return steps_; }

  // Each returns the new step's index.
  int32_t advance(int32_t base, double seconds) {
    return add({ClockStep::Kind::kAdvance, base, 0, 0, 0, seconds});
  }
  int32_t receive(int32_t base, int source_position, int32_t source_step, int64_t bytes) {
    return add({ClockStep::Kind::kReceive, base, source_step, source_position, bytes, 0});
  }
  int32_t local(int32_t base, int source_position, int32_t source_step, double seconds) {
    return add({ClockStep::Kind::kLocal, base, source_step, source_position, 0, seconds});
  }
  int32_t join(int32_t base, int32_t other) {
    return add({ClockStep::Kind::kJoin, base, other, 0, 0, 0});
  }

 private:
  int32_t add(const ClockStep& step) {
    if (static_cast<int64_t>(steps_.size()) >= limit_) throw_full();
    steps_.push_back(step);
    return static_cast<int32_t>(steps_.size() - 1);
  }
  [[noreturn]] void throw_full() const {
    ResourceError error("its clock reached " +
                        std::to_string(limit_ - 1) +
                        " moves (receives, advances, joins), its share of the "
                        "VirtualTime::replay_steps a launch priced after it ends (congestion-aware "
                        "or external network) may keep; raise it or split the program into "
                        "shorter launches");
    error.set_device(device_);
    throw error;
  }

  std::vector<ClockStep> steps_;
  int device_ = 0;
  int64_t limit_ = 0;
};

}  // namespace meshsim
