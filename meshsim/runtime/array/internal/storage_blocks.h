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
// 2 KiB, so at most 24 KiB a thread); a block freed on another thread than
// the one that allocated it joins the freeing thread's cache; a thread's
// cached blocks go back to tbbmalloc when it exits (a device thread's, after
// each launch).
//
// Sanitizer builds use the system allocator and no cache: ThreadSanitizer and
// AddressSanitizer intercept malloc / free, not tbbmalloc or a cache, so
// they would miss use-after-free and report reuse of a block by another
// thread as a race.

#include <array>
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
// of them could hold 96 MiB) and TBBMALLOC_CLEAN_ALL_BUFFERS reaches it all.
void release_thread_storage_blocks();

// The size classes, exposed for tests: 64-byte steps up to 512 bytes, then
// quarter steps of each power of two up to 2 KiB, so a block wastes at most
// 64 bytes or a fifth of itself (a 1 KiB array and its header take 1280).
struct BlockCache {
  static constexpr std::array<uint16_t, 15> kBlockBytes = {
      128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 1792, 2048};
  static constexpr int kClasses = static_cast<int>(kBlockBytes.size());
  static constexpr int kDepth = 2;
  // The class whose blocks hold `bytes`, or kUncached above the largest.
  static uint8_t class_of(size_t bytes) {
    if (bytes > kBlockBytes.back()) return kUncached;
    return kClassOf64ths[(bytes + 63) / 64];
  }
  static constexpr size_t block_bytes(int size_class) { return kBlockBytes[size_class]; }
  // Blocks the calling thread holds in its cache now (0 in sanitizer builds).
  static int cached_on_this_thread();

 private:
  // The class of a request of k 64-byte units, k = 0 .. 32.
  static constexpr std::array<uint8_t, 33> kClassOf64ths = [] {
    std::array<uint8_t, 33> table{};
    int c = 0;
    for (size_t units = 0; units < table.size(); ++units) {
      while (kBlockBytes[c] < units * 64) ++c;
      table[units] = static_cast<uint8_t>(c);
    }
    return table;
  }();
};

}  // namespace meshsim::detail
