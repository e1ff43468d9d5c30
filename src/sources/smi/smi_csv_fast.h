// Fast value parsers for the hot path of big `nvidia-smi --query-gpu ... -l` logs.
// Each one is a drop-in for the text_util expression named in its comment: it decides the
// common shapes ("45", " 78.32 W", "1024 MiB", "0x0000000000000004", "P0") in one pass over
// the raw field, and hands every other shape ("[N/A]", tabs, exponents, huge values, ...)
// to that very expression, so both paths give identical results by construction.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sources/smi/text_util.h"

namespace gw::smi::fast {

namespace detail {

inline const char* skip_spaces(const char* p, const char* e) {
  while (p < e && *p == ' ') ++p;
  return p;
}

inline unsigned digit(char c) {
  return static_cast<unsigned>(c) - static_cast<unsigned>('0');
}

// The decimal digits at p (p moves past them). Returns how many; `out` is only meaningful
// for up to 19 of them, so callers check the count before using it.
inline size_t digits(const char*& p, const char* e, uint64_t& out) {
  const char* d = p;
  uint64_t n = 0;
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
inline std::string_view unit_of(const char* p, const char* e) {
  while (p < e && text::is_space(*p)) ++p;
  while (e > p && text::is_space(e[-1])) --e;
  return std::string_view(p, static_cast<size_t>(e - p));
}

// "612.34" with at most 15 integer and 6 fraction digits and no exponent, computed with the
// same arithmetic as text_util's simple_number (so the doubles are bit-identical).
// Returns false for any other shape; `p` then points past the number.
inline bool simple_decimal(const char*& p, const char* e, double& num) {
  uint64_t whole = 0;
  const size_t used = digits(p, e, whole);
  if (used == 0 || used >= 16) return false;
  num = static_cast<double>(whole);
  if (p < e && *p == '.') {
    ++p;
    uint64_t frac = 0;
    const size_t fused = digits(p, e, frac);
    static constexpr double kScale[] = {1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
    if (fused > 6) return false;
    num += static_cast<double>(frac) * kScale[fused];
  }
  return !(p < e && (*p == 'e' || *p == 'E'));
}

}  // namespace detail

// == text::to_unsigned(text::parse_u64(text::trim(v)))
inline std::optional<unsigned> to_unsigned(std::string_view v) {
  const char* p = v.data();
  const char* e = p + v.size();
  if (p < e && *p == ' ') ++p;  // ", 85 %": the one space nvidia-smi puts after a comma
  if (p == e) return std::nullopt;
  unsigned x = detail::digit(*p);
  if (x <= 9) {
    const char* d = p;
    uint32_t n = x;  // wraps past 9 digits; such values take the careful path below
    for (++p; p < e && (x = detail::digit(*p)) <= 9; ++p) n = n * 10 + x;
    const auto used = p - d;
    if (used <= 9 && !(used == 1 && p < e && (*p | 0x20) == 'x')) return n;
  } else if (!text::is_space(*p)) {
    return std::nullopt;  // "[N/A]", "[Not Supported]": no digit after trimming
  }
  return text::to_unsigned(text::parse_u64(text::trim(v)));
}

// == text::parse_u64(text::trim(v))
inline std::optional<uint64_t> to_u64(std::string_view v) {
  return text::parse_u64(text::trim(v));
}

// == text::to_int(text::parse_i64(text::trim(v)))
inline std::optional<int> to_int(std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  const bool neg = p < e && *p == '-';
  if (neg) ++p;
  uint64_t n = 0;
  const size_t used = detail::digits(p, e, n);
  if (used >= 1 && used <= 9) return neg ? -static_cast<int>(n) : static_cast<int>(n);
  return text::to_int(text::parse_i64(text::trim(v)));
}

// == text::parse_watts_mw(v)
inline std::optional<uint32_t> watts_mw(std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  if (p < e && *p == '[') return std::nullopt;  // "[N/A]": no number text_util would read
  double num = 0;
  if (!detail::simple_decimal(p, e, num)) return text::parse_watts_mw(v);
  if (num > 4.0e6) return std::nullopt;
  const std::string_view unit = detail::unit_of(p, e);
  const double mult = unit.size() == 2 && unit == "mW" ? 1.0 : 1000.0;
  return static_cast<uint32_t>(num * mult + 0.5);
}

// == text::parse_mem_bytes(v)
inline std::optional<uint64_t> mem_bytes(std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  if (p < e && *p == '[') return std::nullopt;
  double num = 0;
  if (!detail::simple_decimal(p, e, num)) return text::parse_mem_bytes(v);
  const std::string_view unit = detail::unit_of(p, e);
  double mult = 1024.0 * 1024.0;  // MiB, also for "" (nounits) and unknown units
  if (unit.size() > 1 &&
      !(unit.size() == 3 && unit[0] == 'M' && unit[1] == 'i' && unit[2] == 'B')) {
    if (unit == "GiB" || unit == "GB")
      mult = 1024.0 * 1024.0 * 1024.0;
    else if (unit == "KiB" || unit == "KB")
      mult = 1024.0;
  } else if (unit == "B") {
    mult = 1.0;
  }
  // As text::parse_mem_bytes: a value past 2^64 bytes is unknown (converting it would be UB).
  const double bytes = num * mult + 0.5;
  if (!(bytes >= 0) || bytes >= 18446744073709551616.0) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

// == text::parse_hex(text::trim(v))  ("0x0000000000000004")
inline std::optional<uint64_t> hex(std::string_view v) {
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
    if (used >= 1 && used <= 16) return n;
  }
  return text::parse_hex(text::trim(v));
}

// == text::parse_pstate(v)  ("P0")
inline std::optional<unsigned> pstate(std::string_view v) {
  const char* e = v.data() + v.size();
  const char* p = detail::skip_spaces(v.data(), e);
  if (p < e && (*p == 'P' || *p == 'p')) {
    ++p;
    uint64_t n = 0;
    const size_t used = detail::digits(p, e, n);
    if (used >= 1 && used <= 9 && !(used == 1 && p < e && (*p == 'x' || *p == 'X')))
      return static_cast<unsigned>(n);
  }
  return text::parse_pstate(v);
}

// == text::parse_bool(text::trim(v))
inline std::optional<bool> to_bool(std::string_view v) {
  return text::parse_bool(text::trim(v));
}

}  // namespace gw::smi::fast
