// Counter-based deterministic randomness for trace synthesis and resampling: the same seed
// gives the same numbers on every platform and standard library (std distributions do not).
#pragma once

#include <cstdint>

namespace gw::sim::rnd {

// SplitMix64 finaliser: a good 64-bit mix of a counter.
inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The i-th draw of stream `stream` for `seed`.
inline uint64_t draw(uint64_t seed, uint64_t stream, uint64_t i) {
  return mix64(mix64(seed ^ mix64(stream)) + i);
}

// Uniform in [0, 1) with 53 random bits.
inline double unit(uint64_t seed, uint64_t stream, uint64_t i) {
  return static_cast<double>(draw(seed, stream, i) >> 11) * 0x1.0p-53;
}

// Uniform integer in [0, n), n > 0 (modulo bias is below n / 2^64: negligible here).
inline uint64_t below(uint64_t seed, uint64_t stream, uint64_t i, uint64_t n) {
  return draw(seed, stream, i) % n;
}

// Stream ids, so that different uses of one seed do not correlate.
inline constexpr uint64_t kUserStream = 1;
inline constexpr uint64_t kLimitStream = 2;
inline constexpr uint64_t kResampleJobStream = 3;
inline constexpr uint64_t kResampleGapStream = 4;

}  // namespace gw::sim::rnd
