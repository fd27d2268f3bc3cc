// The tbbmalloc modes Array storage sets leave a host's own choice alone
// (issue 9 item 23): a mode the host set through its environment variable is
// not overridden, whatever the value.

#include "meshsim/runtime/array/internal/allocator_settings.h"

#include <gtest/gtest.h>

namespace meshsim::allocator_settings_test {
namespace {

TEST(AllocatorSettingsTest, SetsBothModesWhenTheHostChoseNeither) {
  const AllocatorSettings settings = allocator_settings(nullptr, nullptr);
  EXPECT_TRUE(settings.use_huge_pages);
  EXPECT_TRUE(settings.huge_size_threshold);
}

TEST(AllocatorSettingsTest, LeavesAloneEachModeTheHostChose) {
  EXPECT_FALSE(allocator_settings("0", nullptr).use_huge_pages);
  EXPECT_TRUE(allocator_settings("0", nullptr).huge_size_threshold);
  EXPECT_FALSE(allocator_settings("1", nullptr).use_huge_pages);
  EXPECT_TRUE(allocator_settings(nullptr, "8388608").use_huge_pages);
  EXPECT_FALSE(allocator_settings(nullptr, "8388608").huge_size_threshold);
  EXPECT_FALSE(allocator_settings("", "").use_huge_pages);
  EXPECT_FALSE(allocator_settings("", "").huge_size_threshold);
}

}  // namespace
}  // namespace meshsim::allocator_settings_test
