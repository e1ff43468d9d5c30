#include "sources/dcgm/dmon_shapes.h"

#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if GW_DMON_FIT_AVX2
#include <immintrin.h>
#endif

namespace gw::dcgm {

namespace {

constexpr size_t kNone = ~size_t{0};
__extension__ typedef unsigned __int128 U128;  // GCC's and Clang's; -Wpedantic allows it so

void mark(uint64_t (&m)[2], size_t i) {
  m[i / 64] |= uint64_t{1} << (i % 64);
}

// The field cell [b, e) of p as plain_decimal reads a number: digits with at most one point,
// not first, at most 15 digits. `point`: where its point is (kNone: none).
bool plain_cell(const char* p, size_t b, size_t e, size_t& point) {
  point = kNone;
  for (size_t i = b; i < e; ++i) {
    if (p[i] == '.' && point == kNone && i != b)
      point = i;
    else if (p[i] < '0' || p[i] > '9')
      return false;
  }
  return e > b && e - b - (point != kNone ? 1 : 0) <= 15;
}

// The largest cell of `digits` digits, `decimals` of them after the point (as an integer of
// those digits), that is not above the value m / 10^d: such a cell is above it exactly when
// it is above this one. m >= 0.
int64_t highest_within(int64_t m, unsigned d, size_t digits, size_t decimals) {
  const int64_t all_nines = kPow10[digits] - 1;
  if (d >= decimals) return std::min(m / kPow10[d - decimals], all_nines);  // rounded down
  const size_t up = decimals - d;
  int64_t t = 0;
  if (up > 15 || __builtin_mul_overflow(m, kPow10[up], &t)) return all_nines;
  return std::min(t, all_nines);
}

}  // namespace

void make_shape(const char* p, size_t nl, const text::RowWords& w,
                const std::vector<CellBound>& fields, DmonShape& s) {
  s = DmonShape{};
  s.words = w;
  s.nl = static_cast<uint32_t>(nl);
  text::RowWords it = w;
  size_t b = 0, e = 0;
  // The k-th field's cell [b, e): "N/A" or XIDER's "0" as written, or digits held to the bound.
  const auto field = [&](size_t k) {
    const CellBound& f = fields[k];
    if (e - b == 3 && p[b] == 'N' && p[b + 1] == '/' && p[b + 2] == 'A') {
      s.na_fields |= k < 64 ? uint64_t{1} << k : 0;
      return k < 64;
    }
    if (f.kind == CellBound::kZero) return e - b == 1 && p[b] == '0';
    size_t point = kNone;
    if (f.kind != CellBound::kMax || f.m < 0 || f.decimals > 15 || !plain_cell(p, b, e, point))
      return false;
    const size_t digits = e - b - (point != kNone ? 1 : 0);
    const size_t decimals = point != kNone ? e - 1 - point : 0;
    int64_t t = highest_within(f.m, f.decimals, digits, decimals);
    for (size_t i = e; i-- > b;) {
      mark(s.cells, i);
      if (i == point) continue;
      s.bound[i] = static_cast<char>('0' + t % 10);
      t /= 10;
      mark(s.digits, i);
    }
    mark(s.firsts, b);
    return true;
  };
  bool usable = it.next(b, e) && it.next(b, e);  // "GPU" and its id
  for (size_t k = 0; usable && k < fields.size(); ++k) usable = it.next(b, e) && field(k);
  usable = usable && !it.next(b, e);  // no word past the fields
  // The rest as written: "GPU" and its id, the blanks, the points, the '\n', and the cells of a
  // shape that is not usable (a row written otherwise is another shape: its own is made).
  for (size_t i = 0; i <= nl; ++i) {
    if ((s.digits[i / 64] >> (i % 64) & 1) != 0) continue;
    s.bound[i] = p[i];
    mark(s.exact, i);
  }
  s.usable = usable;
}

namespace {

// Bit i: byte i of the row differs from the bound's, is above it (as a signed byte), is no
// digit.
struct Masks {
  uint64_t ne[2] = {0, 0}, gt[2] = {0, 0}, bad[2] = {0, 0};
};

inline Fit verdict(const DmonShape& s, const Masks& m) {
  if (((m.ne[0] & s.exact[0]) | (m.ne[1] & s.exact[1])) != 0) return Fit::kOther;
  if (!s.usable || ((m.bad[0] & s.digits[0]) | (m.bad[1] & s.digits[1])) != 0) return Fit::kAbove;
  // A cell is above its bound where its first digit that differs is greater. Adding each
  // cell's first bit to the bytes that are equal carries through them to that digit.
  const auto wide = [](const uint64_t(&w)[2]) { return static_cast<U128>(w[1]) << 64 | w[0]; };
  const U128 diff = wide(m.ne) & wide(s.digits);
  const U128 first = ((~diff & wide(s.cells)) + wide(s.firsts)) & diff;
  return (first & wide(m.gt)) == 0 ? Fit::kWithin : Fit::kAbove;
}

}  // namespace

// Each half of the row whole, its steps unrolled and its masks in registers: a loop to the
// '\n' was a branch missed wherever rows of two lengths alternate, and masks indexed by the
// half were kept in memory. x - '0' + 0x80 above 9 + 0x80 as a signed byte: x is no digit.
Fit fit(const DmonShape& s, const char* p) {
  Masks m;
#if defined(__SSE2__)
  const __m128i shift = _mm_set1_epi8(static_cast<char>(0x80 - '0'));
  const __m128i nine = _mm_set1_epi8(static_cast<char>(0x80 + 9));
  const auto half = [&](size_t from, uint64_t& n, uint64_t& g, uint64_t& d) {
#pragma GCC unroll 4
    for (size_t k = 0; k < 64; k += 16) {
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + from + k));
      const __m128i b = _mm_load_si128(reinterpret_cast<const __m128i*>(s.bound + from + k));
      const auto eq = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, b)));
      n |= uint64_t{~eq & 0xffffu} << k;
      g |= uint64_t{static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpgt_epi8(x, b)))} << k;
      d |= uint64_t{static_cast<unsigned>(
               _mm_movemask_epi8(_mm_cmpgt_epi8(_mm_add_epi8(x, shift), nine)))}
           << k;
    }
  };
  half(0, m.ne[0], m.gt[0], m.bad[0]);
  if (s.nl >= 64) half(64, m.ne[1], m.gt[1], m.bad[1]);
#else
  for (size_t k = 0; k <= s.nl; ++k) {
    const auto x = static_cast<signed char>(p[k]), b = static_cast<signed char>(s.bound[k]);
    const uint64_t bit = uint64_t{1} << (k % 64);
    if (x != b) m.ne[k / 64] |= bit;
    if (x > b) m.gt[k / 64] |= bit;
    if (x < '0' || x > '9') m.bad[k / 64] |= bit;
  }
#endif
  return verdict(s, m);
}

#if GW_DMON_FIT_AVX2
namespace {

// One half of the row (64 bytes from p, its bound from b), 32 bytes a step.
__attribute__((target("avx2"))) inline void avx2_half(const char* p, const char* b, uint64_t& n,
                                                      uint64_t& g, uint64_t& d) {
  const __m256i shift = _mm256_set1_epi8(static_cast<char>(0x80 - '0'));
  const __m256i nine = _mm256_set1_epi8(static_cast<char>(0x80 + 9));
  for (size_t k = 0; k < 64; k += 32) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + k));
    const __m256i y = _mm256_load_si256(reinterpret_cast<const __m256i*>(b + k));
    const auto eq = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, y)));
    n |= uint64_t{~eq} << k;
    g |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(x, y)))} << k;
    d |= uint64_t{static_cast<uint32_t>(
             _mm256_movemask_epi8(_mm256_cmpgt_epi8(_mm256_add_epi8(x, shift), nine)))}
         << k;
  }
}

}  // namespace

// fit, 32 bytes a step: half the steps, where most of a long dmon's time is.
__attribute__((target("avx2"))) Fit fit_avx2(const DmonShape& s, const char* p) {
  Masks m;
  avx2_half(p, s.bound, m.ne[0], m.gt[0], m.bad[0]);
  if (s.nl >= 64) avx2_half(p + 64, s.bound + 64, m.ne[1], m.gt[1], m.bad[1]);
  return verdict(s, m);
}
#endif

uint64_t row_key(const char* p) {
  uint64_t blanks = 0, nls = 0;
#if defined(__SSE2__)
#pragma GCC unroll 4
  for (size_t k = 0; k < 64; k += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    blanks |=
        uint64_t{static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(' '))))}
        << k;
    nls |=
        uint64_t{static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))))}
        << k;
  }
#else
  for (size_t k = 0; k < 64; ++k) {
    if (p[k] == ' ') blanks |= uint64_t{1} << k;
    if (p[k] == '\n') nls |= uint64_t{1} << k;
  }
#endif
  return nls != 0 ? blanks & ((nls & (0 - nls)) - 1) : blanks;
}

// One of two slots: the one that holds the shape, else a stale one, else the first, whose shape
// moves to the second (a hint at either may now name another shape: fit tells).
DmonShape& DmonShapes::slot(const text::RowWords& w, size_t nl) {
  const uint64_t h =
      (w.starts0 ^ w.ends0 * 3 ^ w.starts1 * 5 ^ w.ends1 * 7 ^ nl * 11) * 0x9e3779b97f4a7c15ull;
  DmonShape& a = at[h >> 57];
  DmonShape& b = at[(h >> 50) & (kSlots - 1)];
  if (holds(a, w, nl) || &a == &b || a.made_at != moves) return a;
  if (holds(b, w, nl) || b.made_at != moves) return b;
  b = a;
  return a;
}

FitFn fit_for_this_cpu() {
#if GW_DMON_FIT_AVX2
  if (__builtin_cpu_supports("avx2")) return fit_avx2;
#endif
  return fit;
}

}  // namespace gw::dcgm
