#pragma once
// Launch: one run of a function on every device of a mesh. Internal to
// runtime/: owns the launch's cancellation flag, its first error, the count of
// devices still running, and the deadlock detector.
//
// Lifetime: reference counted (the launching thread plus one per device once
// started), because the last device touches the `done` word after the
// launching thread may already have seen it change.

#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "meshsim/runtime/exec/internal/function_ref.h"
#include "meshsim/runtime/exec/internal/launch_report.h"
#include "meshsim/runtime/comm/internal/mesh_state.h"
#include "meshsim/runtime/exec/internal/wait_word.h"
#include "meshsim/runtime/exec/internal/waiter.h"
#include "meshsim/runtime/exec/launch_record.h"

namespace meshsim {

class DeviceContext;
class Fiber;
class FiberRunner;
class FiberScheduler;
class LaunchTime;
class RuntimeImpl;
struct DeviceState;

// `error`, thrown by device `device_id`'s code, as the caller will see it:
// meshsim errors keep their type and get the device (one raised on a device
// of a launch that code made keeps that device in its message); anything
// else becomes a DeviceError naming the device, the type and the message.
std::exception_ptr attribute_error(int device_id, std::exception_ptr error);

// Whether a launch records its devices' events, and how many per device.
struct LaunchTraceSettings {
  bool on = false;
  size_t capacity = 0;
};

class Launch final : public BlockTracker {
 public:
  // `enclosing`: the launch whose device body started this one (null when a
  // host thread did); it outlives this launch. The caller holds the one
  // reference a new launch has. `time` (null: no virtual time) outlives it.
  Launch(MeshState& mesh, std::vector<DeviceState*> devices,
         FunctionRef<void(DeviceContext&)> body, WaitPolicy policy, const Launch* enclosing,
         LaunchTime* time = nullptr, LaunchTraceSettings trace = {});

  MeshState& mesh() { return mesh_; }
  const MeshState& mesh() const { return mesh_; }
  const Launch* enclosing() const { return enclosing_; }
  // The runtime it runs on (its devices').
  RuntimeImpl& runtime() const;
  const std::vector<DeviceState*>& devices() const { return devices_; }
  WaitWord& done() { return done_; }
  uint32_t done_initial() const { return done_initial_; }

  // Posts the body to every device (the caller owns them): wakes their
  // threads, or in fiber mode posts `fibers` (FiberScheduler::prepare) to
  // `scheduler`, block 0 to `here` if given (reserved for it), for the
  // caller to run. noexcept: once a device may run, the launch must be
  // waited for.
  void start(FiberScheduler* scheduler, std::vector<std::unique_ptr<Fiber>>& fibers,
             FiberRunner* here = nullptr) noexcept;
  // Runs the body on the device at mesh position `position` (its thread or fiber).
  void run_device(int position);

  // Records the first error (others are dropped) and cancels every wait.
  // `device_id` < 0: an error of the whole launch (deadlock, timeout).
  void fail(int device_id, std::exception_ptr error);
  // For a device whose own error interrupts a collective in which peers may
  // still read or write its buffers in place: fails the launch, then returns
  // only once every device has finished or been cancelled, so unwinding may
  // free those buffers.
  void fail_and_settle(DeviceState& device, std::exception_ptr error);
  bool failed() const { return aborted_.load(std::memory_order_acquire); }
  // Rethrows the recorded error on the launching thread (only when failed(),
  // once), handing over the launch's reference to it: the last device to
  // finish may delete the launch, and then drops no error the launching
  // thread still uses (ThreadSanitizer cannot see exception_ptr's own
  // synchronization, and its report, even suppressed, stalls the thread).
  [[noreturn]] void rethrow();

  void release() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Each device's virtual clock reading when its body returned, by mesh
  // position (empty without virtual time). Once the launch is done.
  const std::vector<double>& end_times() const { return end_times_; }
  // With tracing on: every device's events (each device exported its own
  // as its part ended), by mesh position, into `record` (events,
  // events_dropped), their virtual times as readings. Once the launch is
  // done, while the caller still holds its devices.
  void take_events(LaunchRecord& record);
  // Where every device is, summarized by state (launch_report.h).
  std::string progress_report(const std::string& headline) const;

  // BlockTracker: deadlock detection.
  void on_block() override;
  void on_unblock() override;
  void on_cancelled() override;

 private:
  ~Launch() = default;
  void abort();
  void check_deadlock();
  std::vector<DeviceSnapshot> snapshot() const;
  // A device is settled once it finished or was cancelled: it touches no
  // peer's buffers any more.
  void settle();

  MeshState& mesh_;
  std::vector<DeviceState*> devices_;  // by mesh position
  FunctionRef<void(DeviceContext&)> body_;
  WaitPolicy policy_;
  const Launch* enclosing_;
  LaunchTime* time_;
  std::vector<double> end_times_;  // readings, written by each device at its position
  LaunchTraceSettings trace_;
  std::chrono::steady_clock::time_point origin_;  // wall-time zero of the trace
  std::unique_ptr<std::atomic<bool>[]> started_;
  std::unique_ptr<std::atomic<bool>[]> finished_;

  std::atomic<bool> aborted_{false};
  std::atomic<int> refs_{1};
  std::atomic<int> remaining_;
  // Devices neither blocked (announced) nor finished: when it reaches zero the
  // launch may be deadlocked.
  alignas(64) std::atomic<int> active_;
  WaitWord done_;
  uint32_t done_initial_;
  std::atomic<int> settled_{0};
  WaitWord all_settled_;  // advanced once, when settled_ reaches the device count

  mutable std::mutex error_mu_;
  std::exception_ptr error_;
};

// Releases the launching thread's reference.
struct LaunchRelease {
  void operator()(Launch* launch) const { launch->release(); }
};
using LaunchHandle = std::unique_ptr<Launch, LaunchRelease>;

}  // namespace meshsim
