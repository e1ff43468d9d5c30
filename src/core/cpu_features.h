// What this CPU can run beyond the build's baseline, asked once per process: the SIMD scans
// (kmsg anchor scan, CSV row scan) pick their widest path from it at run time.
#pragma once

namespace gw::cpu {

#if defined(__x86_64__)
inline bool has_ssse3() {
  static const bool yes = __builtin_cpu_supports("ssse3");
  return yes;
}

inline bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#endif

}  // namespace gw::cpu
