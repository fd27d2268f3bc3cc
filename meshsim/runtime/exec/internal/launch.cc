#include "meshsim/runtime/exec/internal/launch.h"

#include <typeinfo>

#include "meshsim/runtime/exec/device_context.h"
#include "meshsim/runtime/exec/internal/device_state.h"
#include "meshsim/runtime/exec/errors.h"

namespace meshsim {

Launch::Launch(MeshState& mesh, std::vector<DeviceState*> devices,
               FunctionRef<void(DeviceContext&)> body, WaitPolicy policy,
               spdlog::logger& logger)
    : mesh_(mesh),
      devices_(std::move(devices)),
      body_(body),
      policy_(policy),
      logger_(logger),
      finished_(new std::atomic<bool>[devices_.size()]),
      refs_(static_cast<int>(devices_.size()) + 1),
      remaining_(static_cast<int>(devices_.size())),
      active_(static_cast<int>(devices_.size())),
      done_initial_(done_.load()) {
  for (size_t i = 0; i < devices_.size(); ++i) finished_[i].store(false, std::memory_order_relaxed);
}

void Launch::run_device(int position) {
  DeviceState& device = *devices_[position];
  device.waiter.set_policy(policy_);
  device.idle_waiter.set_policy(WaitPolicy::idle_after(static_cast<int>(devices_.size())));
  device.waiter.attach(&aborted_, this);
  device.collectives_done.store(0, std::memory_order_relaxed);
  {
    DeviceContext context(*this, device, position);
    try {
      body_(context);
    } catch (...) {
      fail(device.id, std::current_exception());
    }
  }
  if (!device.waiter.cancelled()) settle();
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

void Launch::fail(int device_id, std::exception_ptr error) {
  {
    std::lock_guard lock(error_mu_);
    if (error_ == nullptr) {
      try {
        std::rethrow_exception(error);
      } catch (CancelledError&) {
        // Only a consequence of another failure; never the launch's error.
      } catch (Error& e) {
        if (device_id >= 0) e.set_device(device_id);
        error_ = error;
      } catch (std::exception& e) {
        error_ = std::make_exception_ptr(DeviceError(
            "device " + std::to_string(device_id) + " threw " + typeid(e).name() + ": " + e.what(),
            error));
      } catch (...) {
        error_ = std::make_exception_ptr(DeviceError(
            "device " + std::to_string(device_id) + " threw a non-std::exception", error));
      }
    }
  }
  abort();
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

void Launch::rethrow() const {
  std::lock_guard lock(error_mu_);
  if (error_ != nullptr) std::rethrow_exception(error_);
  throw CancelledError("launch was cancelled without an error");
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
  fail(/*device_id=*/-1, std::make_exception_ptr(DeadlockError(progress_report(
                             "deadlock: every device of the launch on " + mesh_.mesh().to_string() +
                             " is blocked inside meshsim and none can proceed:"))));
}

std::string Launch::progress_report(const std::string& headline) const {
  std::string report = headline;
  for (size_t i = 0; i < devices_.size(); ++i) {
    const DeviceState& d = *devices_[i];
    report += "\n  device " + std::to_string(d.id) + ": ";
    if (finished_[i].load()) {
      report += "finished";
      continue;
    }
    const char* op = d.current_op.load(std::memory_order_acquire);
    const Rendezvous* group = d.current_group.load(std::memory_order_relaxed);
    const uint64_t done = d.collectives_done.load();
    if (op == nullptr && d.waiter.blocked_on() == nullptr) {
      report += "running its own code after " + std::to_string(done) + " collectives";
      continue;
    }
    report += std::string("waiting in ") + (op ? op : "an unnamed wait");
    if (group != nullptr) report += " on " + group->describe();
    report += " after " + std::to_string(done) + " collectives";
  }
  return report;
}

}  // namespace meshsim
