// What this CPU can run beyond the build's baseline, asked once per process: the SIMD scans
// (kmsg anchor scan, CSV row scan) pick their widest path from it at run time.
#pragma once

namespace gw::cpu {

#if defined(__x86_64__)
inline bool has_ssse3() {
  static const bool yes = __builtin_cpu_supports("ssse3");
  return yes;
}

// AVX2 paths may use POPCNT too (every CPU with AVX2 has it; asked all the same).
inline bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
  return yes;
}
#endif

}  // namespace gw::cpu
