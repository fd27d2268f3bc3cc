// The per-thread cache of small storage blocks (internal/storage_blocks.h):
// its size classes, that a thread reuses the blocks it freed, at most kDepth
// of a class, and that blocks freed on another thread, or by a thread_local
// object destroyed after the cache's flush at thread exit, are handled.

#include "meshsim/runtime/array/internal/storage_blocks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "meshsim/mesh/internal/sanitizers.h"
#include "meshsim/runtime/array/array.h"
#include "meshsim/runtime/exec/runtime.h"

namespace meshsim::storage_blocks_test {
namespace {

using detail::allocate_storage_block;
using detail::BlockCache;
using detail::free_storage_block;
using detail::kUncached;

#if MESHSIM_TSAN || MESHSIM_ASAN
constexpr bool kCacheOn = false;
#else
constexpr bool kCacheOn = true;
#endif

TEST(StorageBlocksTest, SizeClassesStepBy64BytesThenByQuartersUpTo2KiB) {
  EXPECT_EQ(BlockCache::class_of(0), 0);
  EXPECT_EQ(BlockCache::class_of(72), 0);  // an 8-byte array and its header
  EXPECT_EQ(BlockCache::block_bytes(0), 128u);
  EXPECT_EQ(BlockCache::block_bytes(BlockCache::class_of(129)), 192u);
  EXPECT_EQ(BlockCache::block_bytes(BlockCache::class_of(512)), 512u);
  EXPECT_EQ(BlockCache::block_bytes(BlockCache::class_of(513)), 640u);
  EXPECT_EQ(BlockCache::block_bytes(BlockCache::class_of(1024 + 64)), 1280u);  // 1 KiB array
  EXPECT_EQ(BlockCache::block_bytes(BlockCache::class_of(2048)), 2048u);
  EXPECT_EQ(BlockCache::class_of(2049), kUncached);
  // Every request fits its class, and no smaller class would hold it.
  for (size_t bytes = 1; bytes <= 2048; ++bytes) {
    const int c = BlockCache::class_of(bytes);
    ASSERT_GE(BlockCache::block_bytes(c), bytes);
    if (c > 0) ASSERT_LT(BlockCache::block_bytes(c - 1), bytes);
  }
}

TEST(StorageBlocksTest, BlocksAreAlignedAndLargeOnesAreNotCached) {
  for (size_t bytes : {1, 100, 2048, 2049, 1 << 20}) {
    const detail::StorageBlock block = allocate_storage_block(bytes);
    ASSERT_NE(block.memory, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.memory) % detail::kStorageBlockAlignment, 0u);
    EXPECT_EQ(block.size_class == kUncached, !kCacheOn || bytes > 2048) << bytes;
    free_storage_block(block.memory, block.size_class);
  }
}

TEST(StorageBlocksTest, AThreadReusesUpToDepthBlocksItFreed) {
  if (!kCacheOn) GTEST_SKIP() << "sanitizer builds use the system allocator, uncached";
  std::thread([] {
    std::vector<detail::StorageBlock> blocks;
    for (int i = 0; i < BlockCache::kDepth + 2; ++i) blocks.push_back(allocate_storage_block(72));
    EXPECT_EQ(BlockCache::cached_on_this_thread(), 0);
    for (const auto& b : blocks) free_storage_block(b.memory, b.size_class);
    EXPECT_EQ(BlockCache::cached_on_this_thread(), BlockCache::kDepth);  // the rest went back
    // The last one cached comes back first, at any size of its class.
    const detail::StorageBlock again = allocate_storage_block(128);
    EXPECT_EQ(again.memory, blocks[BlockCache::kDepth - 1].memory);
    EXPECT_EQ(BlockCache::cached_on_this_thread(), BlockCache::kDepth - 1);
    // Another class does not take it.
    const detail::StorageBlock bigger = allocate_storage_block(1000);
    EXPECT_EQ(BlockCache::cached_on_this_thread(), BlockCache::kDepth - 1);
    free_storage_block(bigger.memory, bigger.size_class);
    free_storage_block(again.memory, again.size_class);
    EXPECT_EQ(BlockCache::cached_on_this_thread(), BlockCache::kDepth + 1);
  }).join();
}

TEST(StorageBlocksTest, ASmallArrayResultReusesTheBlockOfTheLastOneFreed) {
  if (!kCacheOn) GTEST_SKIP() << "sanitizer builds use the system allocator, uncached";
  std::thread([] {
    const void* first = nullptr;
    {
      const Array a = Array::full({2}, DType::kFloat32, 1.0);
      first = a.bytes();
    }
    const Array b = Array::full({2}, DType::kFloat32, 2.0);
    EXPECT_EQ(b.bytes(), first);
    EXPECT_EQ(b.at<float>({1}), 2.0f);
  }).join();
}

TEST(StorageBlocksTest, ArraysFreedOnAnotherThreadJoinThatThreadsCache) {
  std::vector<Array> made;
  for (int i = 0; i < 8; ++i) made.push_back(Array::full({4}, DType::kInt32, i));
  std::thread([&] {
    made.clear();
    EXPECT_EQ(BlockCache::cached_on_this_thread(), kCacheOn ? BlockCache::kDepth : 0);
    const Array reused = Array::full({4}, DType::kInt32, 7.0);
    EXPECT_EQ(reused.at<int32_t>({3}), 7);
  }).join();  // its cached blocks go back to the allocator here
}

TEST(StorageBlocksTest, ADeviceThreadReturnsItsCachedBlocksAfterEachLaunch) {
  if (!kCacheOn) GTEST_SKIP() << "sanitizer builds use the system allocator, uncached";
  RuntimeOptions options;
  options.execution = ExecutionMode::kThreads;  // a fiber worker keeps its (few) blocks
  Runtime runtime(2, options);
  const Mesh mesh = Mesh::make({{"x", 2}});
  std::atomic<int> cached_at_start{-1}, cached_at_end{-1};
  for (int launch = 0; launch < 2; ++launch) {
    runtime.launch(mesh, [&](DeviceContext& ctx) {
      if (ctx.device_id() != 0) return;
      if (launch == 1) cached_at_start = BlockCache::cached_on_this_thread();
      { const Array scratch = Array::iota({8}, DType::kInt32); }
      cached_at_end = BlockCache::cached_on_this_thread();
    });
  }
  EXPECT_EQ(cached_at_end.load(), 1);    // the scratch block, while the body runs
  EXPECT_EQ(cached_at_start.load(), 0);  // released between the launches
}

// An Array in a thread_local made before the thread first cached a block is
// destroyed after the cache's flush at thread exit: it must go to the
// allocator, not into a cache nobody will flush again.
std::atomic<int> g_cached_after_exit_free{-1};

struct HeldArray {
  Array array = Array::full({2}, DType::kFloat64, 3.0);
  ~HeldArray() {
    array = Array();  // frees the block (the default Array's {0} shape has none)
    g_cached_after_exit_free = BlockCache::cached_on_this_thread();
  }
};

TEST(StorageBlocksTest, AnArrayFreedAfterTheThreadsFlushGoesToTheAllocator) {
  std::thread([] {
    thread_local HeldArray held;
    EXPECT_EQ(held.array.at<double>({0}), 3.0);
    { const Array temporary = Array::zeros({2}, DType::kFloat64); }  // registers the flush
    EXPECT_EQ(BlockCache::cached_on_this_thread(), kCacheOn ? 1 : 0);
  }).join();
  EXPECT_EQ(g_cached_after_exit_free.load(), 0);
}

}  // namespace
}  // namespace meshsim::storage_blocks_test
