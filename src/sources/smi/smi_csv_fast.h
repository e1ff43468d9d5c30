// Fast value parsers for the hot path of big `nvidia-smi --query-gpu ... -l` logs.
// Each one is a drop-in for the text_util expression named in its comment: it decides the
// common shapes ("45", " 78.32 W", "1024 MiB", "0x0000000000000004", "P0") in one pass over
// the raw field, and hands every other shape ("[N/A]", tabs, exponents, huge values, ...)
// to that very expression, so both paths give identical results by construction.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "sources/smi/text_util.h"

namespace gw::smi::fast {

// The value parsers marked always_inline run per field of every row of a big log: as calls
// they cost about as much as their work.

namespace detail {

inline const char* skip_spaces(const char* p, const char* e) {
  while (p < e && *p == ' ') ++p;
  return p;
}

inline unsigned digit(char c) {
  return static_cast<unsigned>(c) - static_cast<unsigned>('0');
}

// The decimal digits at p (p moves past them). Returns how many; `out` is only meaningful
// for up to 19 of them, so callers check the count before using it. With 8 bytes left before
// e they are read as one word: the digits found and converted without a loop per digit.
[[gnu::always_inline]] inline size_t digits(const char*& p, const char* e, uint64_t& out) {
  const char* d = p;
  uint64_t n = 0;
  if (e - p >= 8) {
    uint64_t w = 0;
    std::memcpy(&w, p, 8);
    const uint64_t x = w - 0x3030303030303030ULL;  // digits become 0..9; no borrow before one
    const uint64_t bad = (x | (x + 0x7676767676767676ULL)) & 0x8080808080808080ULL;
    const size_t k = bad == 0 ? 8 : static_cast<size_t>(__builtin_ctzll(bad)) >> 3;
    if (k == 0) {
      out = 0;
      return 0;
    }
    // The k digits to the word's top, zeros before them, then pairs, quads, eights.
    uint64_t v = k == 8 ? x : x << (8 * (8 - k));
    v = (v * 10 + (v >> 8)) & 0x00FF00FF00FF00FFULL;
    v = (v * 100 + (v >> 16)) & 0x0000FFFF0000FFFFULL;
    n = (v * 10000 + (v >> 32)) & 0xFFFFFFFFULL;
    p += k;
    if (k < 8) {
      out = n;
      return k;
    }
  }
  for (unsigned x; p < e && (x = digit(*p)) <= 9; ++p) n = n * 10 + x;
  out = n;
  return static_cast<size_t>(p - d);
}

// True when the first character after the spaces at p can start no number text_util reads
// (its parsers trim, then need a digit): the value is unknown without further work.
inline bool no_number(const char* p, const char* e) {
  return p == e || (digit(*p) > 9 && !text::is_space(*p));
}

// The unit after a number: spaces skipped, trailing white space dropped.
[[gnu::always_inline]] inline std::string_view unit_of(const char* p, const char* e) {
  while (p < e && text::is_space(*p)) ++p;
  while (e > p && text::is_space(e[-1])) --e;
  return std::string_view(p, static_cast<size_t>(e - p));
}

// "612.34": the digits before and after the point, as read; `p` moves past them.
struct Decimal {
  uint64_t whole = 0, frac = 0;
  size_t frac_digits = 0;
};

// "612.34" with at most 15 integer and 6 fraction digits and no exponent. Returns false for
// any other shape; `p` then points past the number.
[[gnu::always_inline]] inline bool simple_parts(const char*& p, const char* e, Decimal& d) {
  const size_t whole_digits = digits(p, e, d.whole);
  if (whole_digits == 0 || whole_digits >= 16) return false;
  if (p < e && *p == '.') {
    ++p;
    d.frac_digits = digits(p, e, d.frac);
    if (d.frac_digits > 6) return false;
  }
  return !(p < e && (*p == 'e' || *p == 'E'));
}

// The number as text_util's simple_number computes it (so the doubles are bit-identical).
inline double to_double(const Decimal& d) {
  static constexpr double kScale[] = {1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
  double num = static_cast<double>(d.whole);
  if (d.frac_digits > 0) num += static_cast<double>(d.frac) * kScale[d.frac_digits];
  return num;
}

// slot = v, and whether the slot went from empty to set or back (see the parsers below).
template <class T>
[[gnu::always_inline]] inline bool set(std::optional<T>& slot, T v) {
  const bool was = slot.has_value();
  slot = v;
  return !was;
}

template <class T>
[[gnu::always_inline]] inline bool set(std::optional<T>& slot, std::nullopt_t) {
  const bool was = slot.has_value();
  slot.reset();
  return was;
}

// The slow paths: text_util's result, which comes back whole from a call.
template <class T>
inline bool set(std::optional<T>& slot, const std::optional<T>& v) {
  return v ? set(slot, *v) : set(slot, std::nullopt);
}

}  // namespace detail

// Each parser writes its value into a slot and returns whether the slot went from empty to set
// or back (capabilities are made of that). The value is stored on every return path by itself:
// had the paths merged into one returned std::optional, GCC would build it on the stack in two
// stores (value, flag) and read it back in one load, a store-to-load forward that stalls on
// every field of every row (a third of apply_row's samples in `perf annotate`). Each has a
// plain form returning the optional, for callers off the hot path and for the tests.

// == text::to_unsigned(text::parse_u64(text::trim(v)))
[[gnu::always_inline]] inline bool put_unsigned(std::optional<unsigned>& slot, std::string_view v) {
  const char* p = v.data();
  const char* e = p + v.size();
  if (p < e && *p == ' ') ++p;  // ", 85 %": the one space nvidia-smi puts after a comma
  if (p == e) return detail::set(slot, std::nullopt);
  unsigned x = detail::digit(*p);
  if (x <= 9) {
    const char* d = p;
    uint32_t n = x;  // wraps past 9 digits; such values take the careful path below
    for (++p; p < e && (x = detail::digit(*p)) <= 9; ++p) n = n * 10 + x;
    const auto used = p - d;
    if (used <= 9 && !(used == 1 && p < e && (*p | 0x20) == 'x')) return detail::set(slot, n);
  } else if (!text::is_space(*p)) {
    return detail::set(slot, std::nullopt);  // "[N/A]", "[Not Supported]": no digit after trim
  }
  return detail::set(slot, text::to_unsigned(text::parse_u64(text::trim(v))));
}

// == text::parse_u64(text::trim(v))
inline bool put_u64(std::optional<uint64_t>& slot, std::string_view v) {
  return detail::set(slot, text::parse_u64(text::trim(v)));
}

// == text::to_int(text::parse_i64(text::trim(v)))
[[gnu::always_inline]] inline bool put_int(std::optional<int>& slot, std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  const bool neg = p < e && *p == '-';
  if (neg) ++p;
  uint64_t n = 0;
  const size_t used = detail::digits(p, e, n);
  if (used >= 1 && used <= 9)
    return detail::set(slot, neg ? -static_cast<int>(n) : static_cast<int>(n));
  return detail::set(slot, text::to_int(text::parse_i64(text::trim(v))));
}

// == text::parse_watts_mw(v)
// With at most 3 fraction digits and a unit in watts the milliwatts are whole: the double
// arithmetic (num * 1000 + 0.5, truncated) lands within 1e-6 of that integer, so integer
// arithmetic gives the very same value.
[[gnu::always_inline]] inline bool put_watts_mw(std::optional<uint32_t>& slot, std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  if (p < e && *p == '[') return detail::set(slot, std::nullopt);  // "[N/A]": no number
  detail::Decimal d;
  if (!detail::simple_parts(p, e, d)) return detail::set(slot, text::parse_watts_mw(v));
  // " W" as nvidia-smi prints it, else the unit as text_util reads it.
  const bool milli = !(e - p == 2 && p[0] == ' ' && p[1] == 'W') && detail::unit_of(p, e) == "mW";
  if (!milli && d.frac_digits <= 3 && d.whole <= 4000000) {
    static constexpr uint32_t kMilli[] = {1000, 100, 10, 1};
    const uint64_t mw = d.whole * 1000 + d.frac * kMilli[d.frac_digits];
    if (mw > 4000000000u) return detail::set(slot, std::nullopt);  // num > 4.0e6
    return detail::set(slot, static_cast<uint32_t>(mw));
  }
  const double num = detail::to_double(d);
  if (num > 4.0e6) return detail::set(slot, std::nullopt);
  return detail::set(slot, static_cast<uint32_t>(num * (milli ? 1.0 : 1000.0) + 0.5));
}

// == text::parse_mem_bytes(v)
// A whole number of units (every unit is a power of two bytes) below 2^33 gives its bytes
// exactly in double arithmetic too: integer arithmetic then gives the very same value.
[[gnu::always_inline]] inline bool put_mem_bytes(std::optional<uint64_t>& slot,
                                                 std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  if (p < e && *p == '[') return detail::set(slot, std::nullopt);
  detail::Decimal d;
  if (!detail::simple_parts(p, e, d)) return detail::set(slot, text::parse_mem_bytes(v));
  unsigned shift = 20;  // MiB, also for "" (nounits) and unknown units
  if (!(e - p == 4 && std::memcmp(p, " MiB", 4) == 0)) {  // as nvidia-smi prints it
    const std::string_view unit = detail::unit_of(p, e);
    if (unit == "GiB" || unit == "GB")
      shift = 30;
    else if (unit == "KiB" || unit == "KB")
      shift = 10;
    else if (unit == "B")
      shift = 0;
  }
  if (d.frac == 0 && d.whole < (uint64_t{1} << 33)) return detail::set(slot, d.whole << shift);
  // As text::parse_mem_bytes: a value past 2^64 bytes is unknown (converting it would be UB).
  const double bytes = detail::to_double(d) * static_cast<double>(uint64_t{1} << shift) + 0.5;
  if (!(bytes >= 0) || bytes >= 18446744073709551616.0) return detail::set(slot, std::nullopt);
  return detail::set(slot, static_cast<uint64_t>(bytes));
}

// == text::parse_hex(text::trim(v))  ("0x0000000000000004")
[[gnu::always_inline]] inline bool put_hex(std::optional<uint64_t>& slot, std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
    p += 2;
    const char* d = p;
    while (p < e && *p == '0') ++p;  // masks are mostly zeros: "0x0000000000000004"
    uint64_t n = 0;
    for (; p < e && p - d <= 16; ++p) {
      const char c = *p;
      unsigned x = detail::digit(c);
      if (x > 9) {
        const unsigned l = static_cast<unsigned>(c | 0x20) - static_cast<unsigned>('a');
        if (l > 5) break;
        x = l + 10;
      }
      n = (n << 4) | x;
    }
    const auto used = p - d;
    if (used >= 1 && used <= 16) return detail::set(slot, n);
  }
  return detail::set(slot, text::parse_hex(text::trim(v)));
}

// == text::parse_pstate(v)  ("P0")
inline bool put_pstate(std::optional<unsigned>& slot, std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  if (p < e && (*p == 'P' || *p == 'p')) {
    ++p;
    uint64_t n = 0;
    const size_t used = detail::digits(p, e, n);
    if (used >= 1 && used <= 9 && !(used == 1 && p < e && (*p == 'x' || *p == 'X')))
      return detail::set(slot, static_cast<unsigned>(n));
  }
  return detail::set(slot, text::parse_pstate(v));
}

// == text::parse_bool(text::trim(v))
inline bool put_bool(std::optional<bool>& slot, std::string_view v) {
  return detail::set(slot, text::parse_bool(text::trim(v)));
}

// The plain forms.
template <class T, bool (*kPut)(std::optional<T>&, std::string_view)>
inline std::optional<T> parsed(std::string_view v) {
  std::optional<T> out;
  kPut(out, v);
  return out;
}
inline std::optional<unsigned> to_unsigned(std::string_view v) {
  return parsed<unsigned, put_unsigned>(v);
}
inline std::optional<uint64_t> to_u64(std::string_view v) {
  return parsed<uint64_t, put_u64>(v);
}
inline std::optional<int> to_int(std::string_view v) {
  return parsed<int, put_int>(v);
}
inline std::optional<uint32_t> watts_mw(std::string_view v) {
  return parsed<uint32_t, put_watts_mw>(v);
}
inline std::optional<uint64_t> mem_bytes(std::string_view v) {
  return parsed<uint64_t, put_mem_bytes>(v);
}
inline std::optional<uint64_t> hex(std::string_view v) {
  return parsed<uint64_t, put_hex>(v);
}
inline std::optional<unsigned> pstate(std::string_view v) {
  return parsed<unsigned, put_pstate>(v);
}
inline std::optional<bool> to_bool(std::string_view v) {
  return parsed<bool, put_bool>(v);
}

}  // namespace gw::smi::fast
