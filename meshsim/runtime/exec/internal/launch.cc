#include "meshsim/runtime/exec/internal/launch.h"

#include <cxxabi.h>

#include <cstdlib>
#include <functional>
#include <typeinfo>

#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/internal/fiber/fiber_scheduler.h"
#include "meshsim/runtime/exec/internal/launch_report.h"
#include "meshsim/runtime/exec/internal/runtime_impl.h"

namespace meshsim {
namespace {

std::string readable_name(const std::type_info* type) {
  if (type == nullptr) return "an unknown type";
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(type->name(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name != nullptr ? name.get() : type->name();
}

}  // namespace

std::exception_ptr attribute_error(int device_id, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (Error& e) {
    e.reattribute(device_id);
    return error;
  } catch (std::exception& e) {
    return std::make_exception_ptr(DeviceError(device_id, readable_name(&typeid(e)), e.what(), error));
  } catch (...) {
    return std::make_exception_ptr(DeviceError(
        device_id, readable_name(abi::__cxa_current_exception_type()) + " (not derived from std::exception)",
        "", error));
  }
}

Launch::Launch(MeshState& mesh, std::vector<DeviceState*> devices,
               FunctionRef<void(DeviceContext&)> body, WaitPolicy policy,
               const Launch* enclosing, LaunchTime* time, LaunchTraceSettings trace)
    : mesh_(mesh),
      devices_(std::move(devices)),
      body_(body),
      policy_(policy),
      enclosing_(enclosing),
      time_(time),
      end_times_(time != nullptr ? devices_.size() : 0),
      trace_(trace),
      origin_(trace.on ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}),
      started_(new std::atomic<bool>[devices_.size()]),
      finished_(new std::atomic<bool>[devices_.size()]),
      remaining_(static_cast<int>(devices_.size())),
      active_(static_cast<int>(devices_.size())),
      done_initial_(done_.load()) {
  for (size_t i = 0; i < devices_.size(); ++i) {
    started_[i].store(false, std::memory_order_relaxed);
    finished_[i].store(false, std::memory_order_relaxed);
  }
}

RuntimeImpl& Launch::runtime() const { return devices_.front()->runtime; }

void Launch::start(FiberScheduler* scheduler, std::vector<std::unique_ptr<Fiber>>& fibers,
                   FiberRunner* here) noexcept {
  refs_.fetch_add(static_cast<int>(devices_.size()), std::memory_order_relaxed);
  for (size_t position = 0; position < devices_.size(); ++position) {
    DeviceState& device = *devices_[position];
    device.launch = this;
    device.position = static_cast<int>(position);
    if (scheduler == nullptr) device.work.advance();
  }
  if (scheduler != nullptr) scheduler->post(fibers, here);
}

void Launch::run_device(int position) {
  DeviceState& device = *devices_[position];
  started_[position].store(true, std::memory_order_relaxed);
  device.waiter.set_policy(policy_);
  device.idle_waiter.set_policy(WaitPolicy::idle_after(static_cast<int>(devices_.size())));
  device.waiter.attach(&aborted_, this);
  device.collectives_done.store(0, std::memory_order_relaxed);
  device.settled_early = false;
  device.records.clear();
  device.records_dropped = 0;
  device.clock.begin_launch(time_, position);
  device.trace.begin_launch(trace_.on, trace_.capacity, origin_, device.id, device.core,
                            device.agent, position);
  device.context.enter(*this, position);
  try {
    body_(device.context);
  } catch (const CancelledError&) {
    // A meshsim wait or call cancelled because the launch failed is no
    // error of this device's; a CancelledError its own code threw is.
    if (!device.waiter.cancelled()) fail(device.id, std::current_exception());
  } catch (...) {
    fail(device.id, std::current_exception());
  }
  device.context.leave();
  if (trace_.on) device.trace.export_events();  // here, on the core that holds them
  if (time_ != nullptr) end_times_[position] = device.clock.now;
  if (!device.waiter.cancelled() && !device.settled_early) settle();
  device.waiter.detach();
  device.current_op.store(nullptr, std::memory_order_relaxed);
  finished_[position].store(true, std::memory_order_seq_cst);
  // A device that finishes may leave the others blocked for good (a precv
  // with no matching psend): the detector runs when the count hits zero.
  if (active_.fetch_sub(1, std::memory_order_seq_cst) == 1 &&
      remaining_.load(std::memory_order_seq_cst) > 1) {
    check_deadlock();
  }
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.advance();
  release();
}

void Launch::take_events(LaunchRecord& record) {
  if (!trace_.on) return;
  size_t total = 0;
  for (const DeviceState* device : devices_) total += device->trace.exported();
  record.events.reserve(total);
  for (DeviceState* device : devices_) record.events_dropped += device->trace.take_events(record.events);
}

void Launch::fail(int device_id, std::exception_ptr error) {
  if (device_id >= 0) error = attribute_error(device_id, std::move(error));
  {
    std::lock_guard lock(error_mu_);
    if (error_ == nullptr) error_ = std::move(error);
  }
  abort();
}

void Launch::fail_and_settle(DeviceState& device, std::exception_ptr error) {
  fail(device.id, std::move(error));
  // Settled already (a cancelled wait, or an error raised where it settled):
  // counting it twice would release the others while it still runs.
  if (device.settled_early || device.waiter.cancelled()) return;
  device.settled_early = true;
  device.waiter.mark_cancelled();
  on_cancelled();
}

void Launch::abort() {
  if (aborted_.exchange(true, std::memory_order_seq_cst)) return;
  // Change the very word each blocked device sleeps on; a device that blocks
  // after this loop looked at it sees aborted_ instead (Waiter::block).
  for (DeviceState* device : devices_) {
    if (const WaitWord* word = device->waiter.blocked_on()) {
      const_cast<WaitWord*>(word)->poison();
    }
  }
}

void Launch::rethrow() {
  // failed() implies an error: aborted_ is set only by fail(), after it.
  std::exception_ptr error;
  {
    std::lock_guard lock(error_mu_);
    error = std::move(error_);
  }
  std::rethrow_exception(std::move(error));
}

void Launch::on_block() {
  if (active_.fetch_sub(1, std::memory_order_seq_cst) == 1) check_deadlock();
}

void Launch::on_unblock() { active_.fetch_add(1, std::memory_order_seq_cst); }

void Launch::settle() {
  if (settled_.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<int>(devices_.size())) {
    all_settled_.advance();
  }
}

void Launch::on_cancelled() {
  // A cancelled device may be in the middle of a collective whose leader is
  // still writing its output, or whose peers still copy from it: it returns
  // (and frees those buffers) only when every device has finished or been
  // cancelled too. Peers never wait for it, so this cannot deadlock; a device
  // busy in its own code delays the others exactly as long as it delays the
  // end of the launch anyway.
  settle();
  Waiter plain;
  plain.set_policy({.spin_ns = 0, .yield_ns = 20'000});
  plain.wait(all_settled_, [](uint32_t value) { return value != 0; });
}

void Launch::check_deadlock() {
  // A consistent snapshot by double collect: if every unfinished device is
  // blocked, in the same block episode on both passes, on a word that still
  // holds the value it went to sleep on, then at a moment between the passes
  // all of them were asleep at once with nobody left to wake them.
  const size_t n = devices_.size();
  std::vector<uint64_t> episodes(n);
  int blocked = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < n; ++i) {
      if (finished_[i].load(std::memory_order_seq_cst)) continue;
      blocked += pass;
      const Waiter& w = devices_[i]->waiter;
      const uint64_t episode = w.block_episode();
      const WaitWord* word = w.blocked_on();
      if (word == nullptr || word->load(std::memory_order_seq_cst) != w.blocked_value()) return;
      if (pass == 0) {
        episodes[i] = episode;
      } else if (episodes[i] != episode) {
        return;
      }
    }
  }
  // Nobody blocked: everyone finished while we looked.
  if (blocked == 0 || active_.load(std::memory_order_seq_cst) != 0) return;
  const std::vector<DeviceSnapshot> where = snapshot();
  const std::string mesh = runtime().describe(mesh_.mesh());
  if (auto mismatch = find_group_mismatch(where)) {
    CollectiveMismatchError error(mismatch->message + "\nWhere every device of the launch on " +
                                  mesh + " waits:" +
                                  summarize_devices(where));
    error.set_device(mismatch->first_device);
    fail(/*device_id=*/-1, std::make_exception_ptr(std::move(error)));
    return;
  }
  fail(/*device_id=*/-1,
       std::make_exception_ptr(DeadlockError(
           "deadlock: every device of the launch on " + mesh +
           " is blocked inside meshsim and none can proceed:" + summarize_devices(where))));
}

namespace {

// " for DMA semaphore 1 to reach 4096 (it holds 0)"; the value only while the
// device is blocked on the semaphore's word, when it cannot change under us.
std::string describe_wait_note(const DeviceState& d) {
  const WaitNote& note = d.wait_note;
  const WaitWord* word = note.word.load(std::memory_order_acquire);
  if (word == nullptr) return {};
  std::string out = " for ";
  out += note.kind.load(std::memory_order_relaxed);
  const int index = note.index.load(std::memory_order_relaxed);
  // Appended piece by piece: g++ 12 warns falsely about `" " + std::string`.
  if (index >= 0) {
    out += ' ';
    out += std::to_string(index);
  }
  out += " to reach ";
  out += std::to_string(note.target.load(std::memory_order_relaxed));
  if (d.waiter.blocked_on() == word) {
    out += " (it holds ";
    const int64_t holds = note.holds.load(std::memory_order_relaxed);
    out += std::to_string(holds >= 0 ? holds
                                     : WaitNote::held(d.waiter.blocked_value(),
                                                      note.consumed.load(std::memory_order_relaxed)));
    out += ')';
  }
  return out;
}

}  // namespace

std::vector<DeviceSnapshot> Launch::snapshot() const {
  std::vector<DeviceSnapshot> out(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) {
    const DeviceState& d = *devices_[i];
    DeviceSnapshot& s = out[i];
    s.id = d.id;
    s.core = d.core;
    s.agent = d.agent;
    if (finished_[i].load()) {
      s.state = DeviceSnapshot::State::kFinished;
      continue;
    }
    if (!started_[i].load(std::memory_order_relaxed)) {
      s.state = DeviceSnapshot::State::kNotStarted;
      continue;
    }
    s.op = d.current_op.load(std::memory_order_acquire);
    s.group = d.current_group.load(std::memory_order_relaxed);
    s.collectives = d.collectives_done.load();
    const WaitWord* word = d.waiter.waiting_on();
    if (s.op == nullptr && word == nullptr && d.in_nested_launch.load(std::memory_order_relaxed)) {
      s.op = "a launch from its body";
    }
    s.state = s.op == nullptr && word == nullptr ? DeviceSnapshot::State::kOwnCode
                                                 : DeviceSnapshot::State::kWaiting;
    // A point-to-point wait sleeps on a link's word instead.
    s.blocked_in_group_meeting =
        word != nullptr && s.group != nullptr && s.group->is_meeting_word(word);
    s.detail = describe_wait_note(d);
  }
  return out;
}

std::string Launch::progress_report(const std::string& headline) const {
  return headline + summarize_devices(snapshot());
}

}  // namespace meshsim
