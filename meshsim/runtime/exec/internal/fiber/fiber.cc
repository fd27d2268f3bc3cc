#include "meshsim/runtime/exec/internal/fiber/fiber.h"

#include <cxxabi.h>

#include "meshsim/mesh/internal/sanitizers.h"
#include "meshsim/runtime/exec/internal/current_device.h"
#include "meshsim/runtime/exec/internal/fiber/stack_pool.h"
#include "meshsim/runtime/exec/internal/launch.h"

#if MESHSIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if MESHSIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace meshsim {
namespace {

namespace fcontext = boost::context::detail;

constinit thread_local Fiber* running = nullptr;

// libstdc++'s per-thread exception state (__cxa_eh_globals in its
// unwind-cxx.h): the stack of exceptions being handled, and the count of
// exceptions thrown and not yet caught (ARM EHABI adds a third field, which
// this mirror does not have). Fibers sharing a thread each keep their own,
// or a fiber parked in a catch block would end another's.
#if defined(__ARM_EABI_UNWINDER__)
#error "the fiber exception-state swap assumes the two-field __cxa_eh_globals"
#endif
struct EhGlobals {
  void* caught;
  unsigned int uncaught;
};

EhGlobals& eh_globals() { return *reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals()); }

}  // namespace

Fiber::Fiber(StackPool& stacks, Launch& launch, DeviceState& device, int position)
    : launch_(launch), device_(device), position_(position), stacks_(stacks), stack_(stacks.take()) {
#if MESHSIM_ASAN
  // A reused stack still carries the shadow of the frames its last fiber
  // never returned from (a fiber leaves by a jump): clear it, or ASan reports
  // the new fiber's writes there.
  ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(stack_.sp) - stack_.size, stack_.size);
#endif
  // The stack grows down from sp; make_fcontext lays the first frame there.
  fiber_context_ = fcontext::make_fcontext(stack_.sp, stack_.size, &Fiber::entry);
#if MESHSIM_TSAN
  tsan_fiber_ = __tsan_create_fiber(0);
#endif
}

Fiber::~Fiber() {
#if MESHSIM_TSAN
  __tsan_destroy_fiber(tsan_fiber_);
#endif
  stacks_.give(stack_);
}

Fiber* Fiber::current() { return running; }

void Fiber::entry(fcontext::transfer_t from) {
  auto* self = static_cast<Fiber*>(from.data);
  self->worker_context_ = from.fctx;
  self->entered();
  self->launch_.run_device(self->position_);  // catches whatever the body throws
  self->state_ = State::kEnded;
  self->switch_to_worker(/*final=*/true);  // never comes back
}

void Fiber::switch_to_worker(bool final) {
#if MESHSIM_ASAN
  // A fiber leaving for good passes no fake-stack slot, so ASan frees it.
  __sanitizer_start_switch_fiber(final ? nullptr : &fake_stack_, worker_stack_bottom_,
                                 worker_stack_size_);
#else
  (void)final;
#endif
#if MESHSIM_TSAN
  __tsan_switch_to_fiber(tsan_worker_, 0);
#endif
  worker_context_ = fcontext::jump_fcontext(worker_context_, nullptr).fctx;
  entered();
}

void Fiber::entered() {
#if MESHSIM_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_, &worker_stack_bottom_, &worker_stack_size_);
#endif
}

bool Fiber::resume(Wake why, uint64_t scan) {
  wake_ = why;
  state_ = State::kRunning;
  scan_ = scan;
  running = this;
  set_current_device(&device_);
  EhGlobals& eh = eh_globals();
  const EhGlobals worker_eh = eh;
  eh = {exceptions_.caught, exceptions_.uncaught};
#if MESHSIM_ASAN
  __sanitizer_start_switch_fiber(&worker_fake_stack_, static_cast<char*>(stack_.sp) - stack_.size,
                                 stack_.size);
#endif
#if MESHSIM_TSAN
  tsan_worker_ = __tsan_get_current_fiber();
  __tsan_switch_to_fiber(tsan_fiber_, 0);
#endif
  fiber_context_ = fcontext::jump_fcontext(fiber_context_, this).fctx;
#if MESHSIM_ASAN
  __sanitizer_finish_switch_fiber(worker_fake_stack_, nullptr, nullptr);
#endif
  exceptions_ = {eh.caught, eh.uncaught};
  eh = worker_eh;
  running = nullptr;
  set_current_device(nullptr);
  return state_ == State::kEnded;
}

Fiber::Wake Fiber::park(const WaitWord& word, const FunctionRef<bool(uint32_t)>& done,
                        const std::atomic<bool>* aborted, bool announced,
                        Clock::time_point deadline) {
  word_ = &word;
  done_ = &done;
  aborted_ = aborted;
  announced_ = announced;
  deadline_ = deadline;
  parked_at_scan_ = scan_;
  state_ = State::kParked;
  switch_to_worker(/*final=*/false);
  return wake_;
}

void Fiber::yield() {
  state_ = State::kYielded;
  switch_to_worker(/*final=*/false);
}

Fiber::Wake Fiber::wake_reason(uint64_t scan, std::optional<Clock::time_point>& now) const {
  if (state_ == State::kNew || state_ == State::kYielded) return Wake::kReady;
  if (state_ != State::kParked) return Wake::kStay;
  const uint32_t value = word_->load();
  if (WaitWord::is_poisoned(value) ||
      (aborted_ != nullptr && aborted_->load(std::memory_order_seq_cst)) || (*done_)(value)) {
    return Wake::kReady;
  }
  if (deadline_ != kNoDeadline) {
    if (!now) now = Clock::now();
    if (*now >= deadline_) return Wake::kDeadline;
  }
  if (!announced_ && scan - parked_at_scan_ >= kAnnounceAfterScans) return Wake::kAnnounce;
  return Wake::kStay;
}

}  // namespace meshsim
