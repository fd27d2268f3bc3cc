// A launch that fails to start (an allocation throws) leaves no device owned:
// every allocation the launching thread makes in launch() is made to fail in
// turn, and the next launch on the same devices must still run.
//
// The failures are injected by replacing the global operator new of this test
// executable; it fails only on a thread that armed it.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <new>
#include <thread>

#include "meshsim/runtime/exec/errors.h"
#include "meshsim/runtime/exec/runtime.h"

namespace {
// Allocations left before the one that fails on this thread; negative: never.
thread_local long allocations_before_failure = -1;
}  // namespace

void* operator new(std::size_t size) {
  if (allocations_before_failure == 0) {
    allocations_before_failure = -1;
    throw std::bad_alloc();
  }
  if (allocations_before_failure > 0) --allocations_before_failure;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace meshsim::launch_fault_test {
namespace {

TEST(LaunchFaultTest, AFailedAllocationInLaunchOwnsNoDevice) {
  Runtime rt(4);
  const Mesh mesh = Mesh::make({{"x", 4}});
  const std::function<void(DeviceContext&)> body = [](DeviceContext&) {};
  rt.launch(mesh, body);  // the mesh is interned: later launches allocate less
  int failures = 0;
  for (long n = 0;; ++n) {
    allocations_before_failure = n;
    bool failed = false;
    try {
      rt.launch(mesh, body);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
    const bool armed = allocations_before_failure >= 0;
    allocations_before_failure = -1;
    if (!failed) {
      ASSERT_TRUE(armed) << "allocation " << n << " failed but launch() did not throw";
      break;  // launch() makes fewer than n + 1 allocations on this thread
    }
    ++failures;
    // The devices are free again: a launch from another thread completes.
    std::packaged_task<void()> next([&] { rt.launch(mesh, body); });
    auto done = next.get_future();
    std::thread(std::move(next)).detach();
    if (done.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      // The runtime cannot be destroyed with a launch stuck: report and leave.
      std::fprintf(stderr, "FAILED: after allocation %ld of launch() failed, the devices stayed "
                           "owned\n", n);
      std::_Exit(1);
    }
    done.get();
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace meshsim::launch_fault_test
