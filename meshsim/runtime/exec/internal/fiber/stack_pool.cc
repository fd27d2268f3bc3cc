#include "meshsim/runtime/exec/internal/fiber/stack_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <boost/context/protected_fixedsize_stack.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "meshsim/runtime/exec/errors.h"

namespace meshsim {
namespace {

// Guarded stacks the whole process may map: a quarter of vm.max_map_count
// (each takes two mappings), leaving the rest to everything else.
size_t guard_budget() {
  static const size_t budget = [] {
    size_t limit = 65'530;
    std::ifstream in("/proc/sys/vm/max_map_count");
    in >> limit;
    return std::max<size_t>(limit / 4, 1);
  }();
  return budget;
}
std::atomic<size_t> process_guarded{0};

size_t page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

boost::context::protected_fixedsize_stack guarded_allocator(size_t bytes) {
  return boost::context::protected_fixedsize_stack(bytes);
}

// A stack without a guard page, laid out as protected_fixedsize_stack lays
// out its own (sp at the top, size the whole mapping), so either kind is
// unmapped the same way.
boost::context::stack_context map_plain(size_t bytes) {
  const size_t size = (bytes + page_size() - 1) / page_size() * page_size();
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  boost::context::stack_context stack;
  stack.size = size;
  stack.sp = static_cast<char*>(base) + size;
  return stack;
}

void unmap(boost::context::stack_context& stack) {
  munmap(static_cast<char*>(stack.sp) - stack.size, stack.size);
}

}  // namespace

StackPool::StackPool(size_t stack_bytes) : stack_bytes_(stack_bytes) {}

StackPool::~StackPool() {
  for (auto& stack : all_) unmap(stack);
  process_guarded.fetch_sub(guarded_, std::memory_order_relaxed);
}

boost::context::stack_context StackPool::take() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      const auto stack = free_.back();
      free_.pop_back();
      return stack;
    }
    // Room for one more stack in both lists before mapping it, so neither
    // the record below nor give() allocates once it is mapped. Geometric:
    // 65,536 stacks must not mean 65,536 reallocations. Counted with the
    // stacks other threads are mapping right now.
    const size_t need = mapped_ + pending_ + 1;
    if (all_.capacity() < need) all_.reserve(std::max(need, 2 * all_.capacity()));
    if (free_.capacity() < all_.capacity()) free_.reserve(all_.capacity());
    ++pending_;
  }
  struct Unpend {
    StackPool& pool;
    ~Unpend() {
      std::lock_guard lock(pool.mu_);
      --pool.pending_;
    }
  } unpend{*this};
  const bool guard =
      process_guarded.fetch_add(1, std::memory_order_relaxed) < guard_budget();
  if (!guard) process_guarded.fetch_sub(1, std::memory_order_relaxed);
  try {
    const auto stack = guard ? guarded_allocator(stack_bytes_).allocate() : map_plain(stack_bytes_);
    std::lock_guard lock(mu_);
    ++mapped_;
    guarded_ += guard ? 1 : 0;
    all_.push_back(stack);
    return stack;
  } catch (const std::bad_alloc&) {
    if (guard) process_guarded.fetch_sub(1, std::memory_order_relaxed);
    throw ResourceError("cannot map a fiber stack of " + std::to_string(stack_bytes_) +
                        " bytes (" + std::to_string(mapped()) +
                        " mapped so far): out of address space or memory; lower "
                        "RuntimeOptions::fiber_stack_bytes or run fewer devices at once");
  }
}

void StackPool::give(boost::context::stack_context stack) noexcept {
  std::lock_guard lock(mu_);
  free_.push_back(stack);  // capacity reserved by take()
}

size_t StackPool::mapped() const {
  std::lock_guard lock(mu_);
  return mapped_;
}

FiberStackStats StackPool::stats() const {
  std::lock_guard lock(mu_);
  FiberStackStats stats{.stacks = mapped_, .guarded = guarded_};
  std::vector<unsigned char> resident;
  for (const auto& stack : all_) {
    stats.reserved_bytes += stack.size;
    const size_t pages = stack.size / page_size();
    resident.assign(pages, 0);
    if (mincore(static_cast<char*>(stack.sp) - stack.size, stack.size, resident.data()) != 0) {
      continue;
    }
    for (unsigned char page : resident) stats.resident_bytes += (page & 1) != 0 ? page_size() : 0;
  }
  return stats;
}

}  // namespace meshsim
