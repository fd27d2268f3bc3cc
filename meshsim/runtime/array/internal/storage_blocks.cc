#include "meshsim/runtime/array/internal/storage_blocks.h"

#include <cstdlib>

#include <tbb/scalable_allocator.h>

#include "meshsim/mesh/internal/sanitizers.h"
#include "meshsim/runtime/array/internal/allocation_limit.h"
#include "meshsim/runtime/array/internal/allocator_settings.h"

namespace meshsim::detail {
namespace {

#if MESHSIM_TSAN || MESHSIM_ASAN
constexpr bool kCached = false;
// Their allocators abort instead of returning null above 1 TiB, so larger
// requests fail here (kMaxAllocationBytes) as they would in tbbmalloc on a
// machine without that much memory.
void* allocate_block(size_t bytes) {
  constexpr size_t kAlign = kStorageBlockAlignment;
  if (bytes > kMaxAllocationBytes) return nullptr;
  return std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
}
void free_block(void* block) { std::free(block); }
#else
constexpr bool kCached = true;

// tbbmalloc's modes belong to the one allocator of the process, not to a
// runtime or to meshsim's blocks (see "Allocator settings" in array.h): set
// them once, on the first allocation, except those the host chose. Huge
// pages: 512x fewer page faults on first touch of a big array. Threshold:
// freed blocks of 1 MiB and up stay cached instead of going back to the OS,
// since collectives and shard_map allocate results of the same sizes over and
// over.
bool configure_allocator() {
  const AllocatorSettings settings =
      allocator_settings(std::getenv("TBB_MALLOC_USE_HUGE_PAGES"),
                         std::getenv("TBB_MALLOC_SET_HUGE_OBJECT_THRESHOLD"));
  if (settings.use_huge_pages) scalable_allocation_mode(TBBMALLOC_USE_HUGE_PAGES, 1);
  if (settings.huge_size_threshold) {
    scalable_allocation_mode(TBBMALLOC_SET_HUGE_SIZE_THRESHOLD, 1 << 20);
  }
  return true;
}

void* allocate_block(size_t bytes) {
  [[maybe_unused]] static const bool configured = configure_allocator();
  return scalable_aligned_malloc(bytes, kStorageBlockAlignment);
}
void free_block(void* block) { scalable_aligned_free(block); }
#endif

// The thread's cached blocks, read only by the out-of-line functions below:
// in fiber mode a device may resume on another worker after a wait, and a
// compiler may keep a thread_local's address across that switch in a
// function that inlined its access. Trivially destructible, so it stays usable
// while the thread's other thread_local objects are destroyed (one may hold
// an Array); after Flush ran, `closed` sends every free to the allocator.
struct ThreadBlocks {
  void* blocks[BlockCache::kClasses][BlockCache::kDepth];
  uint8_t count[BlockCache::kClasses];
  bool registered;  // Flush will run at thread exit
  bool closed;      // it ran
};
constinit thread_local ThreadBlocks t_blocks{};

struct Flush {
  Flush() { t_blocks.registered = true; }
  ~Flush() {
    release_thread_storage_blocks();
    t_blocks.closed = true;
  }
};

// Whether the thread may cache a block now: it registered its Flush (the
// first time it caches anything) and Flush has not run yet.
bool may_cache() {
  if (!t_blocks.registered) {
    thread_local Flush flush;  // constructed here, once; destroyed at thread exit
    static_cast<void>(flush);
  }
  return !t_blocks.closed;
}

// The main thread's thread_local destructors run at exit() before any static
// destructor, and a thread_local registered after that never runs: register
// the main thread's Flush now, so that an Array a static destructor frees
// goes to the allocator (closed) instead of a cache nobody flushes.
[[maybe_unused]] const bool registered_at_start = !kCached || may_cache();

}  // namespace

StorageBlock allocate_storage_block(size_t bytes) {
  const uint8_t c = kCached ? BlockCache::class_of(bytes) : kUncached;
  if (c == kUncached) return {allocate_block(bytes), kUncached};
  if (uint8_t& n = t_blocks.count[c]; n > 0) return {t_blocks.blocks[c][--n], c};
  return {allocate_block(BlockCache::block_bytes(c)), c};
}

void free_storage_block(void* memory, uint8_t size_class) {
  if (size_class != kUncached && t_blocks.count[size_class] < BlockCache::kDepth && may_cache()) {
    t_blocks.blocks[size_class][t_blocks.count[size_class]++] = memory;
    return;
  }
  free_block(memory);
}

void release_thread_storage_blocks() {
  for (int c = 0; c < BlockCache::kClasses; ++c) {
    while (t_blocks.count[c] > 0) free_block(t_blocks.blocks[c][--t_blocks.count[c]]);
  }
}

int BlockCache::cached_on_this_thread() {
  int n = 0;
  for (int c = 0; c < kClasses; ++c) n += t_blocks.count[c];
  return n;
}

}  // namespace meshsim::detail
