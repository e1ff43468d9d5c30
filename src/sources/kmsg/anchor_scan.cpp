#include "sources/kmsg/anchor_scan.h"

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "core/cpu_features.h"
#include "sources/kmsg/teddy.h"

namespace gw::kmsg {

bool anchor_pair(char a, char b) {
  return (a == 'V' && b == 'R') || (a == 'X' && b == 'i') || (a == 'R' && b == ':') ||
         (a == 'F' && b == 'O') || (a == 'G' && b == 'b') || (a == 'I' && b == 'e') ||
         (a == 'r' && b == ']');
}

bool mention_triple(char a, char b, char c) {
  return ((a == 'v' || a == 'V') && (b == 'i' || b == 'I') && (c == 'd' || c == 'D')) ||
         (a == 'G' && b == 'P' && c == 'U') || (a == '_' && b == 'n' && c == 'v') ||
         (a == 'C' && b == 'U' && c == 'D') || (a == 'C' && b == 'C' && c == 'L') ||
         (a == 'C' && b == 'G' && c == 'M');
}

size_t next_anchor_scalar(std::string_view text, size_t from, size_t to, bool mentions) {
  const char* d = text.data();
  const size_t n = text.size();
  for (size_t i = from; i < to && i + 1 < n; ++i) {
    if (anchor_pair(d[i], d[i + 1])) return i;
    if (mentions && i + 2 < n && mention_triple(d[i], d[i + 1], d[i + 2])) return i;
  }
  return to;
}

namespace {

#if defined(__x86_64__)
using teddy::buckets16;
using teddy::buckets32;
using teddy::wide_table;
#endif

#if defined(__SSE2__)
// SSE2: the bit of position k is set when d[k..] starts a pair (or a triple): exact.
inline __attribute__((always_inline)) unsigned exact_mask16(const char* d, bool mentions) {
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d));
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 1));
  const auto eq = [](__m128i v, char x) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(x)); };
  const auto both = [&](char x, char y) { return _mm_and_si128(eq(a, x), eq(b, y)); };
  __m128i m =
      _mm_or_si128(_mm_or_si128(_mm_or_si128(both('V', 'R'), both('X', 'i')),
                                _mm_or_si128(both('I', 'e'), both('r', ']'))),
                   _mm_or_si128(_mm_or_si128(both('R', ':'), both('F', 'O')), both('G', 'b')));
  if (mentions) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + 2));
    // v/V, i/I, d/D: OR 0x20 folds the case of these letters.
    const __m128i low = _mm_set1_epi8(0x20);
    const __m128i vid =
        _mm_and_si128(_mm_and_si128(eq(_mm_or_si128(a, low), 'v'), eq(_mm_or_si128(b, low), 'i')),
                      eq(_mm_or_si128(c, low), 'd'));
    const __m128i gpu = _mm_or_si128(_mm_and_si128(both('G', 'P'), eq(c, 'U')),
                                     _mm_and_si128(both('_', 'n'), eq(c, 'v')));
    const __m128i c_tail = _mm_or_si128(
        _mm_or_si128(_mm_and_si128(eq(b, 'U'), eq(c, 'D')), _mm_and_si128(eq(b, 'C'), eq(c, 'L'))),
        _mm_and_si128(eq(b, 'G'), eq(c, 'M')));
    m = _mm_or_si128(m, _mm_or_si128(_mm_or_si128(vid, gpu), _mm_and_si128(eq(a, 'C'), c_tail)));
  }
  return static_cast<unsigned>(_mm_movemask_epi8(m));
}

size_t next_anchor_sse2(std::string_view text, size_t from, size_t to, bool mentions) {
  const char* d = text.data();
  const size_t n = text.size();
  size_t i = from;
  for (; i + 32 <= to && i + 34 <= n; i += 32) {
    const unsigned lo = exact_mask16(d + i, mentions), hi = exact_mask16(d + i + 16, mentions);
    if ((lo | hi) != 0) return i + static_cast<size_t>(__builtin_ctzll(lo | (uint64_t{hi} << 16)));
  }
  return next_anchor_scalar(text, i, to, mentions);
}
#endif

#if defined(__x86_64__)
// SSSE3, Teddy tables (teddy.h) for three positions: a position matches a bucket when its byte,
// the next and the one after all carry that bucket's bit. Buckets: 0 VR/FO, 1 Xi/Gb, 2 GPU/_nv,
// 3 r], 4 R:, 5 Ie, 6 vid (any case), 7 CUD/CCL/CGM; 2, 6 and 7 are the mentions.
struct NibbleTables : teddy::Tables<3> {
  constexpr NibbleTables() {
    const auto pair = [&](unsigned bucket, char a, char b) {
      add(0, bucket, static_cast<unsigned char>(a));
      add(1, bucket, static_cast<unsigned char>(b));
      any(2, bucket);
    };
    // Pairs share a bucket where the product of their nibble sets admits only rare extras:
    // VR/FO also "FB", "F_", "VO"; Xi/Gb also "Hi", "Wi", "Hb".
    pair(0, 'V', 'R');
    pair(0, 'F', 'O');
    pair(1, 'X', 'i');
    pair(1, 'G', 'b');
    pair(3, 'r', ']');
    pair(4, 'R', ':');
    pair(5, 'I', 'e');
    const auto triple = [&](unsigned bucket, const char* w) {
      for (unsigned p = 0; p < 3; ++p) add(p, bucket, static_cast<unsigned char>(w[p]));
    };
    triple(2, "GPU");
    triple(2, "_nv");  // also "GPv", "GnU", "_PU", ...: rare
    triple(6, "vid");
    triple(6, "VID");
    triple(7, "CUD");
    triple(7, "CCL");
    triple(7, "CGM");
  }
};

// Built at compile time: a scan that is called once per anchor (every few lines of a log)
// would otherwise test a static's guard and copy the tables into place at each call, which
// was a third of the AVX2 scan's samples on a big kernel log (docs/perf/parse.md).
constexpr NibbleTables kNibbles;

// The bit of position k is set when d[k], d[k + 1] and d[k + 2] share an enabled bucket.
__attribute__((target("ssse3"), always_inline)) inline unsigned teddy_mask16(const char* d,
                                                                             const __m128i (&lo)[3],
                                                                             const __m128i (&hi)[3],
                                                                             __m128i enabled) {
  const __m128i m =
      _mm_and_si128(_mm_and_si128(buckets16(d, lo[0], hi[0]), buckets16(d + 1, lo[1], hi[1])),
                    _mm_and_si128(buckets16(d + 2, lo[2], hi[2]), enabled));
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(m, _mm_setzero_si128()))) ^ 0xFFFFU;
}

__attribute__((target("ssse3"))) size_t next_anchor_ssse3(std::string_view text, size_t from,
                                                          size_t to, bool mentions) {
  const char* d = text.data();
  const size_t n = text.size();
  const auto table = [](const uint8_t(&t)[16]) {
    return _mm_load_si128(reinterpret_cast<const __m128i*>(t));
  };
  const __m128i lo[3] = {table(kNibbles.lo[0]), table(kNibbles.lo[1]), table(kNibbles.lo[2])};
  const __m128i hi[3] = {table(kNibbles.hi[0]), table(kNibbles.hi[1]), table(kNibbles.hi[2])};
  // A mention bucket (2, 6, 7) is looked at only when mentions are asked for.
  const __m128i enabled = _mm_set1_epi8(static_cast<char>(mentions ? 0xFF : 0x3B));
  size_t i = from;
  for (; i + 32 <= to && i + 34 <= n; i += 32) {
    const unsigned m_lo = teddy_mask16(d + i, lo, hi, enabled);
    const unsigned m_hi = teddy_mask16(d + i + 16, lo, hi, enabled);
    if ((m_lo | m_hi) != 0)
      return i + static_cast<size_t>(__builtin_ctzll(m_lo | (uint64_t{m_hi} << 16)));
  }
  return next_anchor_scalar(text, i, to, mentions);
}

// AVX2: the same buckets 32 positions at a time (the tables repeated in both lanes); half the
// instructions per byte of SSSE3.
__attribute__((target("avx2"), always_inline)) inline uint32_t teddy_mask32(const char* d,
                                                                            const __m256i (&lo)[3],
                                                                            const __m256i (&hi)[3],
                                                                            __m256i enabled) {
  const __m256i m =
      _mm256_and_si256(_mm256_and_si256(buckets32(d, lo[0], hi[0]), buckets32(d + 1, lo[1], hi[1])),
                       _mm256_and_si256(buckets32(d + 2, lo[2], hi[2]), enabled));
  return ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, _mm256_setzero_si256())));
}

__attribute__((target("avx2"))) size_t next_anchor_avx2(std::string_view text, size_t from,
                                                        size_t to, bool mentions) {
  const char* d = text.data();
  const size_t n = text.size();
  const __m256i lo[3] = {wide_table(kNibbles.lo[0]), wide_table(kNibbles.lo[1]),
                         wide_table(kNibbles.lo[2])};
  const __m256i hi[3] = {wide_table(kNibbles.hi[0]), wide_table(kNibbles.hi[1]),
                         wide_table(kNibbles.hi[2])};
  const __m256i enabled = _mm256_set1_epi8(static_cast<char>(mentions ? 0xFF : 0x3B));
  size_t i = from;
  for (; i + 64 <= to && i + 66 <= n; i += 64) {
    const uint32_t m_lo = teddy_mask32(d + i, lo, hi, enabled);
    const uint32_t m_hi = teddy_mask32(d + i + 32, lo, hi, enabled);
    if ((m_lo | m_hi) != 0)
      return i + static_cast<size_t>(__builtin_ctzll(m_lo | (uint64_t{m_hi} << 32)));
  }
  return next_anchor_ssse3(text, i, to, mentions);
}

#endif

}  // namespace

size_t next_anchor_using(AnchorScan path, std::string_view text, size_t from, size_t to,
                         bool mentions) {
#if defined(__x86_64__)
  if (path == AnchorScan::kAvx2 && cpu::has_avx2())
    return next_anchor_avx2(text, from, to, mentions);
  if ((path == AnchorScan::kSsse3 || path == AnchorScan::kAvx2) && cpu::has_ssse3())
    return next_anchor_ssse3(text, from, to, mentions);
#endif
#if defined(__SSE2__)
  if (path != AnchorScan::kScalar) return next_anchor_sse2(text, from, to, mentions);
#endif
  return next_anchor_scalar(text, from, to, mentions);
}

size_t next_anchor(std::string_view text, size_t from, size_t to, bool mentions) {
  return next_anchor_using(AnchorScan::kAvx2, text, from, to, mentions);
}

}  // namespace gw::kmsg
