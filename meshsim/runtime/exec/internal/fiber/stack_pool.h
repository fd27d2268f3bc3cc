#pragma once
// StackPool: the fiber stacks of one runtime, reused from launch to launch.
//
// Each stack is its own mapping with a guard page below it (Boost.Context's
// protected_fixedsize_stack), so a device body that overflows its stack
// faults at once instead of writing into a neighbour's. A guarded stack takes
// two of the kernel's mappings, and Linux allows a process vm.max_map_count of
// them (65,530 by default): so only the first quarter of that many stacks of
// the process get a guard page, and later ones are plain mappings (which the
// kernel merges), so a 65,536-device mesh still runs. Pages are touched only as
// a fiber uses them: a stack costs its reserved address space plus the pages
// its deepest call used. The pool keeps every stack it ever handed out (the
// most a runtime ran at once) until the runtime ends.
//
// Thread-safe: launching threads take stacks; workers, and launching threads
// running block 0 of their launch, give them back.

#include <boost/context/stack_context.hpp>

#include "meshsim/runtime/exec/runtime.h"

#include <cstddef>
#include <mutex>
#include <vector>

namespace meshsim {

class StackPool {
 public:
  // `stack_bytes`: the usable size of each stack (rounded up to whole pages).
  explicit StackPool(size_t stack_bytes);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  size_t stack_bytes() const { return stack_bytes_; }
  // A free stack, mapping a new one if none is free. ResourceError if the
  // system refuses the mapping (address space, or vm.max_map_count).
  boost::context::stack_context take();
  void give(boost::context::stack_context stack) noexcept;
  size_t mapped() const;
  // What the pool holds, in use or not; resident bytes are counted with
  // mincore.
  FiberStackStats stats() const;

 private:
  const size_t stack_bytes_;
  mutable std::mutex mu_;
  std::vector<boost::context::stack_context> all_;
  std::vector<boost::context::stack_context> free_;
  size_t mapped_ = 0;
  size_t pending_ = 0;  // stacks being mapped by take() right now
  size_t guarded_ = 0;
};

}  // namespace meshsim
