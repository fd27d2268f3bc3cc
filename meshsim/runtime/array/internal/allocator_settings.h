#pragma once
// Which process-wide tbbmalloc modes Array storage sets (see "Allocator
// settings" in array.h): a pure function of the host's environment, so that
// the rule is testable although the modes themselves cannot be read back.

namespace meshsim {

struct AllocatorSettings {
  bool use_huge_pages = false;       // TBBMALLOC_USE_HUGE_PAGES = 1
  bool huge_size_threshold = false;  // TBBMALLOC_SET_HUGE_SIZE_THRESHOLD = 1 MiB
};

// Each mode unless the host chose it through the matching environment
// variable: the values of TBB_MALLOC_USE_HUGE_PAGES and
// TBB_MALLOC_SET_HUGE_OBJECT_THRESHOLD, null when unset. tbbmalloc reads
// those at start-up and a scalable_allocation_mode call would override them.
inline AllocatorSettings allocator_settings(const char* use_huge_pages_env,
                                            const char* huge_object_threshold_env) {
  return {.use_huge_pages = use_huge_pages_env == nullptr,
          .huge_size_threshold = huge_object_threshold_env == nullptr};
}

}  // namespace meshsim
