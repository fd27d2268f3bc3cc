#include "meshsim/runtime/exec/internal/fiber/fiber_worker.h"

#include <pthread.h>

#include <string>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/internal/fiber/doorbell.h"
#include "meshsim/runtime/exec/internal/futex.h"

namespace meshsim {

FiberWorker::FiberWorker(int index, const CpuBinding& binding) {
  try {
    thread_ = std::thread([this, index, &binding] {
      binding.enter(index);
      main();
    });
  } catch (const std::system_error& e) {
    throw ResourceError("cannot start fiber worker thread " + std::to_string(index) + ": " +
                        e.what() + " (RuntimeOptions::fiber_workers)");
  }
  const std::string name = "meshsim-fw" + std::to_string(index);
  pthread_setname_np(thread_.native_handle(), name.substr(0, 15).c_str());
}

FiberWorker::~FiberWorker() {
  stop_.store(true, std::memory_order_seq_cst);
  ring_inbox();
  thread_.join();
}

void FiberWorker::ring_inbox() {
  inbox_bell_.fetch_add(1, std::memory_order_seq_cst);
  if (inbox_sleeping_.load(std::memory_order_seq_cst)) futex_wake_all(inbox_bell_);
  ring_fiber_doorbell();  // it may be asleep on the doorbell, with fibers parked
}

void FiberWorker::post(Fiber* first) noexcept {
  if (first == nullptr) return;
  Fiber* last = first;
  while (last->next_posted != nullptr) last = last->next_posted;
  {
    std::lock_guard lock(inbox_mu_);
    (inbox_last_ != nullptr ? inbox_last_->next_posted : inbox_first_) = first;
    inbox_last_ = last;
    has_posts_.store(true, std::memory_order_seq_cst);
  }
  ring_inbox();
}

void FiberWorker::take_posted() {
  Fiber* fiber;
  {
    std::lock_guard lock(inbox_mu_);
    fiber = inbox_first_;
    inbox_first_ = inbox_last_ = nullptr;
    has_posts_.store(false, std::memory_order_relaxed);
  }
  while (fiber != nullptr) {
    Fiber* next = fiber->next_posted;
    fiber->next_posted = nullptr;
    fibers_.add(fiber);
    fiber = next;
  }
}

void FiberWorker::sleep_on_inbox() {
  // Announce, re-check, sleep: the Dekker pair with ring_inbox().
  const uint32_t bell = inbox_bell_.load(std::memory_order_seq_cst);
  inbox_sleeping_.store(true, std::memory_order_seq_cst);
  if (!has_posts_.load(std::memory_order_seq_cst) && !stop_.load(std::memory_order_seq_cst)) {
    futex_wait(inbox_bell_, bell);
  }
  inbox_sleeping_.store(false, std::memory_order_relaxed);
}

void FiberWorker::main() {
  const auto interrupted = [this] {
    return has_posts_.load(std::memory_order_seq_cst) || stop_.load(std::memory_order_seq_cst);
  };
  for (;;) {
    if (has_posts_.load(std::memory_order_acquire)) take_posted();
    if (fibers_.empty() && stop_.load(std::memory_order_acquire)) return;
    if (fibers_.step(interrupted)) sleep_on_inbox();
  }
}

}  // namespace meshsim
