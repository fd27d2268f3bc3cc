#pragma once
// Where Array storage blocks come from: oneTBB's scalable allocator (the
// process-wide modes array.h's "Allocator settings" describe), behind a small
// per-thread cache of freed small blocks.
//
// Why the cache: a collective allocates its result and the caller frees it
// one call later, on the same thread and at the same size, call after call.
// Through tbbmalloc that pair costs ~200 instructions (its thread cache sits
// behind a pthread key, and aligned blocks take its general path): 13 % of a
// 1-device 8-byte psum (callgrind). Here it costs about 20. Each thread
// keeps at most BlockCache::kDepth freed blocks of each size class (128 B to
// 2 KiB, so at most ~8 KiB a thread); a block freed on another thread than
// the one that allocated it joins the freeing thread's cache; a thread's
// cached blocks go back to tbbmalloc when it exits (a device thread's, after
// each launch).
//
// Sanitizer builds use the system allocator and no cache: ThreadSanitizer and
// AddressSanitizer intercept malloc / free, not tbbmalloc or a cache, so
// they would miss use-after-free and report reuse of a block by another
// thread as a race.

#include <cstddef>
#include <cstdint>

namespace meshsim::detail {

// The blocks' alignment (Array::Storage::kAlignment).
inline constexpr size_t kStorageBlockAlignment = 64;

struct StorageBlock {
  void* memory = nullptr;  // null when the allocator could not provide it
  // What free_storage_block needs back: the block's size class, or
  // kUncached.
  uint8_t size_class = 0;
};
inline constexpr uint8_t kUncached = 0xff;

// A block of at least `bytes` bytes, aligned to kStorageBlockAlignment.
// Requests above kMaxAllocationBytes fail.
StorageBlock allocate_storage_block(size_t bytes);
// Frees a block allocate_storage_block returned, with its size class.
void free_storage_block(void* memory, uint8_t size_class);
// Returns the calling thread's cached blocks to the allocator. A device
// thread does so after each launch, so idle device threads hold none (4096
// of them could hold 32 MiB) and TBBMALLOC_CLEAN_ALL_BUFFERS reaches it all.
void release_thread_storage_blocks();

// The size classes, exposed for tests.
struct BlockCache {
  static constexpr size_t kSmallestBlock = 128;
  static constexpr int kClasses = 5;  // 128, 256, 512, 1024, 2048 bytes
  static constexpr int kDepth = 2;
  // The class whose blocks hold `bytes`, or kUncached above the largest.
  static uint8_t class_of(size_t bytes) {
    for (int c = 0; c < kClasses; ++c) {
      if (bytes <= block_bytes(c)) return static_cast<uint8_t>(c);
    }
    return kUncached;
  }
  static constexpr size_t block_bytes(int size_class) { return kSmallestBlock << size_class; }
  // Blocks the calling thread holds in its cache now (0 in sanitizer builds).
  static int cached_on_this_thread();
};

}  // namespace meshsim::detail
