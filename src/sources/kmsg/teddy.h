// The nibble tables of the kernel-log parser's vector prefilters, after Hyperscan's "Teddy":
// each byte value maps to 8 bucket bits through two 16-entry tables (its low and its high
// nibble, looked up with pshufb), one pair of tables per byte position of the patterns. A
// position matches a bucket when each of its bytes carries that bucket's bit at its place. A
// bucket's set of bytes is the product of its nibble sets, so it may admit a few more bytes
// than its patterns (a false start the caller discards), never fewer. Used by the anchor scan
// (anchor_scan.cpp, three positions) and the routine-line test (kernel_log.cpp, two).
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gw::kmsg::teddy {

template <unsigned Positions>
struct Tables {
  alignas(16) uint8_t lo[Positions][16] = {};
  alignas(16) uint8_t hi[Positions][16] = {};
  constexpr void add(unsigned pos, unsigned bucket, unsigned char byte) {
    lo[pos][byte & 0x0F] |= static_cast<uint8_t>(1U << bucket);
    hi[pos][byte >> 4] |= static_cast<uint8_t>(1U << bucket);
  }
  // Every byte value at `pos` (the position does not narrow the bucket).
  constexpr void any(unsigned pos, unsigned bucket) {
    for (unsigned k = 0; k < 16; ++k) add(pos, bucket, static_cast<unsigned char>(k * 17));
  }
};

#if defined(__x86_64__)
// One byte position's bucket bits for 16 positions (lambdas would not inherit the target).
__attribute__((target("ssse3"), always_inline)) inline __m128i buckets16(const char* at, __m128i lo,
                                                                         __m128i hi) {
  const __m128i nib = _mm_set1_epi8(0x0F);
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  return _mm_and_si128(_mm_shuffle_epi8(lo, _mm_and_si128(v, nib)),
                       _mm_shuffle_epi8(hi, _mm_and_si128(_mm_srli_epi16(v, 4), nib)));
}

// The same for 32 positions (vpshufb looks up within each 128-bit lane: see wide_table).
__attribute__((target("avx2"), always_inline)) inline __m256i buckets32(const char* at, __m256i lo,
                                                                        __m256i hi) {
  const __m256i nib = _mm256_set1_epi8(0x0F);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at));
  return _mm256_and_si256(_mm256_shuffle_epi8(lo, _mm256_and_si256(v, nib)),
                          _mm256_shuffle_epi8(hi, _mm256_and_si256(_mm256_srli_epi16(v, 4), nib)));
}

// A 16-entry table in both 128-bit lanes.
__attribute__((target("avx2"), always_inline)) inline __m256i wide_table(const uint8_t (&t)[16]) {
  return _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(t)));
}
#endif

}  // namespace gw::kmsg::teddy
