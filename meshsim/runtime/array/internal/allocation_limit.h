#pragma once
// The largest block meshsim asks an allocator for. A larger request fails at
// once (null / std::bad_alloc), as it would on any machine: no process holds
// more than Array::kMaxBytes (2^47), and the sanitizers' allocators abort
// instead of failing above 1 TiB (their max_allocation_size).

#include <cstddef>

#include "meshsim/mesh/internal/sanitizers.h"

namespace meshsim {

#if MESHSIM_TSAN || MESHSIM_ASAN
inline constexpr size_t kMaxAllocationBytes = size_t{1} << 40;
#else
inline constexpr size_t kMaxAllocationBytes = size_t{1} << 47;
#endif

}  // namespace meshsim
