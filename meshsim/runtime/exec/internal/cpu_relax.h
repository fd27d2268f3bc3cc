#pragma once
// cpu_relax: the spin-loop hint (x86 pause, Arm yield), so a polling thread
// leaves its core's shared resources to the sibling and saves power.

namespace meshsim {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace meshsim
