#pragma once
// Runs `member(rank, waiter)` for ranks 0..n-1 at once, each on its own thread
// (rank 0 on the calling one) with its own Waiter: a group's members meeting
// without a runtime, for tests of the meeting primitives.

#include <thread>
#include <vector>

#include "meshsim/runtime/exec/internal/waiter.h"

namespace meshsim::test_support {

template <class Member>
void run_members(int n, Member member) {
  std::vector<std::thread> threads;
  for (int rank = 1; rank < n; ++rank) {
    threads.emplace_back([&, rank] {
      Waiter waiter;
      member(rank, waiter);
    });
  }
  Waiter waiter;
  member(0, waiter);
  for (std::thread& t : threads) t.join();
}

}  // namespace meshsim::test_support
