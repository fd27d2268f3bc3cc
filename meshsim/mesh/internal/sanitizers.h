#pragma once
// Whether AddressSanitizer or ThreadSanitizer instruments this build, for the
// code that must change with them (the array allocator, which they cannot see
// through; the fiber-switch annotations). gcc defines __SANITIZE_ADDRESS__ and
// __SANITIZE_THREAD__; clang (14 at least) defines neither and answers
// __has_feature instead, so testing the macros alone missed a clang sanitizer
// build. MESHSIM_ASAN and MESHSIM_TSAN are 1 or 0.

#if defined(__SANITIZE_ADDRESS__)
#define MESHSIM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MESHSIM_ASAN 1
#endif
#endif
#ifndef MESHSIM_ASAN
#define MESHSIM_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define MESHSIM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MESHSIM_TSAN 1
#endif
#endif
#ifndef MESHSIM_TSAN
#define MESHSIM_TSAN 0
#endif
