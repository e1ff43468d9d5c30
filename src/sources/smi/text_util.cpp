#include "sources/smi/text_util.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#if defined(__x86_64__)
#include <immintrin.h>

#include "core/cpu_features.h"
#endif
#endif

namespace gw::text {

namespace {
char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}
}  // namespace

namespace {

template <bool kAnySpace>
bool blank(char c) {
  return kAnySpace ? is_space(c) : c == ' ' || c == '\t';
}

#if defined(__SSE2__)
// The word bytes (not blank) of the 16 at p, one bit each.
template <bool kAnySpace>
inline unsigned word_bits(const char* p) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i b =
      _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\t')));
  if (kAnySpace)
    b = _mm_or_si128(b, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\r')),
                                     _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))));
  return ~static_cast<unsigned>(_mm_movemask_epi8(b)) & 0xffffu;
}

// The word bits of bytes [at, at + 16) of s, those past its end blank: the last bytes are read
// as the 16 that end s (the ones before `at` shifted out), or from a blank-padded copy when s is
// shorter than 16.
template <bool kAnySpace>
inline unsigned word_bits_at(std::string_view s, size_t at) {
  const size_t n = s.size();
  if (at + 16 <= n) return word_bits<kAnySpace>(s.data() + at);
  if (n >= 16) return word_bits<kAnySpace>(s.data() + n - 16) >> (16 - (n - at));
  char pad[16];
  std::memset(pad, ' ', sizeof pad);
  std::memcpy(pad, s.data(), n);
  return word_bits<kAnySpace>(pad);
}
#endif

template <bool kAnySpace>
void split_words_impl(std::string_view s, std::vector<std::string_view>& out) {
  out.clear();
  const size_t n = s.size();
#if defined(__SSE2__)
  // A word and the blank after it: no growth inside the loop for a row of up to 1 KiB (a line
  // of megabytes grows as it goes rather than reserving for its worst case).
  out.reserve(std::min<size_t>(n, 1024) / 2 + 1);
  // 64 bytes a window, one bit each. Words and blanks alternate, so once a word left open by
  // the window before is closed, each start pairs with the window's next end; the window's last
  // start may stay open. (One loop over starts and ends together, branching on which came
  // next, missed its guess on most words: a quarter of a long nvidia-smi dmon's time.)
  size_t open = 0;  // where the word still open began
  bool in_word = false;
  for (size_t base = 0; base < n; base += 64) {
    uint64_t word = 0;
    for (size_t k = 0; k < 64 && base + k < n; k += 16)
      word |= uint64_t{word_bits_at<kAnySpace>(s, base + k)} << k;
    const uint64_t before = (word << 1) | (in_word ? 1u : 0u);  // bit k: byte k-1 in a word
    uint64_t starts = word & ~before, ends = ~word & before;
    if (in_word && ends != 0) {
      out.push_back(s.substr(open, base + static_cast<size_t>(__builtin_ctzll(ends)) - open));
      ends &= ends - 1;
    }
    for (; starts != 0; starts &= starts - 1) {
      const size_t k = base + static_cast<size_t>(__builtin_ctzll(starts));
      if (ends == 0) {
        open = k;
        break;
      }
      out.push_back(s.substr(k, base + static_cast<size_t>(__builtin_ctzll(ends)) - k));
      ends &= ends - 1;
    }
    in_word = (word >> 63) != 0;
  }
  if (in_word) out.push_back(s.substr(open));
#else
  size_t start = 0;
  bool in_word = false;
  for (size_t i = 0; i < n; ++i) {
    const bool w = !blank<kAnySpace>(s[i]);
    if (w && !in_word) start = i;
    if (!w && in_word) out.push_back(s.substr(start, i - start));
    in_word = w;
  }
  if (in_word) out.push_back(s.substr(start));
#endif
}

}  // namespace

void split_words(std::string_view s, std::vector<std::string_view>& out) {
  split_words_impl<false>(s, out);
}

void split_words_any_space(std::string_view s, std::vector<std::string_view>& out) {
  split_words_impl<true>(s, out);
}

namespace {

__extension__ typedef unsigned __int128 Bits128;  // GCC's and Clang's; -Wpedantic allows it so

// line_words and line_words_any_space: the blanks are ' ' and '\t', or every is_space byte.
template <bool kAnySpace>
bool line_words_impl(const char* p, RowWords& w, size_t& nl, size_t& len) {
  Bits128 word = 0;
  nl = 128;
#if defined(__SSE2__)
  // Two 64-bit halves and the steps unrolled: a 128-bit shift by a variable count was a
  // branch and two shifts a step.
  uint64_t half[2] = {0, 0};
#pragma GCC unroll 8
  for (size_t k = 0; k < 128; k += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + k));
    const __m128i n = _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'));
    __m128i blank = _mm_or_si128(n, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')),
                                                 _mm_cmpeq_epi8(x, _mm_set1_epi8('\t'))));
    if (kAnySpace) blank = _mm_or_si128(blank, _mm_cmpeq_epi8(x, _mm_set1_epi8('\r')));
    half[k / 64] |= uint64_t{~static_cast<unsigned>(_mm_movemask_epi8(blank)) & 0xffffu}
                    << (k % 64);
    if (const auto at = static_cast<unsigned>(_mm_movemask_epi8(n)); at != 0) {
      nl = k + static_cast<size_t>(__builtin_ctz(at));
      break;
    }
  }
  word = half[0] | static_cast<Bits128>(half[1]) << 64;
#else
  for (size_t k = 0; k < 128 && nl == 128; ++k) {
    if (p[k] == '\n') nl = k;
    if (!blank<kAnySpace>(p[k]) && p[k] != '\n') word |= static_cast<Bits128>(1) << k;
  }
#endif
  if (nl == 128) return false;
  word &= (static_cast<Bits128>(1) << nl) - 1;
  if (!kAnySpace && nl > 0 && p[nl - 1] == '\r') word &= ~(static_cast<Bits128>(1) << (nl - 1));
  const auto hi = static_cast<uint64_t>(word >> 64), lo = static_cast<uint64_t>(word);
  len = hi != 0   ? 128 - static_cast<size_t>(__builtin_clzll(hi))
        : lo != 0 ? 64 - static_cast<size_t>(__builtin_clzll(lo))
                  : 0;
  const Bits128 starts = word & ~(word << 1), ends = ~word & (word << 1);
  w.starts0 = static_cast<uint64_t>(starts);
  w.starts1 = static_cast<uint64_t>(starts >> 64);
  w.ends0 = static_cast<uint64_t>(ends);
  w.ends1 = static_cast<uint64_t>(ends >> 64);
  if (kAnySpace || len == 0) return true;
  // A '\r' that begins the first word or ends the last is trim's to drop, not a word byte: such
  // a line is not read here.
  const size_t first = w.starts0 != 0 ? static_cast<size_t>(__builtin_ctzll(w.starts0))
                                      : 64 + static_cast<size_t>(__builtin_ctzll(w.starts1));
  return p[len - 1] != '\r' && p[first] != '\r';
}

}  // namespace

bool line_words(const char* p, RowWords& w, size_t& nl, size_t& len) {
  return line_words_impl<false>(p, w, nl, len);
}

bool line_words_any_space(const char* p, RowWords& w, size_t& nl, size_t& len) {
  return line_words_impl<true>(p, w, nl, len);
}

size_t find(std::string_view s, std::string_view what, size_t from) {
  const size_t m = what.size();
#if defined(__SSE2__)
  if (m >= 2 && from < s.size()) {
    const __m128i first = _mm_set1_epi8(what.front());
    const __m128i last = _mm_set1_epi8(what.back());
    const char* p = s.data();
    size_t i = from;
    for (; i + m - 1 + 16 <= s.size(); i += 16) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i + m - 1));
      auto bits = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(a, first), _mm_cmpeq_epi8(b, last))));
      for (; bits != 0; bits &= bits - 1) {
        const size_t at = i + static_cast<size_t>(__builtin_ctz(bits));
        if (std::memcmp(p + at + 1, what.data() + 1, m - 2) == 0) return at;
      }
    }
    from = i;  // every start before i was looked at
  }
#endif
  return s.find(what, from);
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}

std::string strip_ansi(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\x1b') {
      out.push_back(s[i]);
      continue;
    }
    // ESC [ params final-byte; a lone ESC is dropped.
    if (i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && !((s[j] >= '@' && s[j] <= '~'))) ++j;
      i = j;
    }
  }
  return out;
}

bool LineReader::next(std::string_view& line) {
  if (pos_ >= text_.size()) return false;
  const char* base = text_.data() + pos_;
  const size_t left = text_.size() - pos_;
  const void* nl = std::memchr(base, '\n', left);
  size_t len = nl ? static_cast<size_t>(static_cast<const char*>(nl) - base) : left;
  pos_ += nl ? len + 1 : len;
  if (len > 0 && base[len - 1] == '\r') --len;
  line = std::string_view(base, len);
  ++line_no_;
  return true;
}

bool is_na(std::string_view v) {
  v = trim(v);
  if (v.empty() || v == "-") return true;
  if (v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
  static constexpr std::array<std::string_view, 7> kNa = {
      "N/A",
      "Not Supported",
      "Unknown Error",
      "Requested functionality has been deprecated",
      "Not available in WDDM driver model",
      "Insufficient Permissions",
      "GPU requires reset"};
  for (auto n : kNa)
    if (starts_with(v, n)) return true;
  return false;
}

FailedReading failed_reading(std::string_view v) {
  v = trim(v);
  if (v.size() < 4) return FailedReading::kNone;
  if (v == "ERR!") return FailedReading::kFailed;
  if (v.front() != '[' && v.front() != 'U' && v.front() != 'G') return FailedReading::kNone;
  if (v.front() == '[' && v.back() == ']') v = v.substr(1, v.size() - 2);
  if (v == "Unknown Error" || v == "Unknown error") return FailedReading::kFailed;
  if (v == "GPU requires reset") return FailedReading::kResetRequired;
  if (v == "GPU is lost") return FailedReading::kLost;
  return FailedReading::kNone;
}

// The numeric parsers rely on from_chars rejecting "N/A", "[N/A]", "-": no is_na() scan on
// the hot path of big CSV logs.
std::optional<uint64_t> parse_u64_slow(std::string_view v) {
  v = trim(v);
  if (v.empty()) return std::nullopt;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) return parse_hex(v);
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p == v.data()) return std::nullopt;
  return out;
}

std::optional<int64_t> parse_i64(std::string_view v) {
  v = trim(v);
  if (v.empty()) return std::nullopt;
  int64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p == v.data()) return std::nullopt;
  return out;
}

std::optional<double> parse_double(std::string_view v) {
  v = trim(v);
  if (v.empty()) return std::nullopt;
  double out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || p == v.data()) return std::nullopt;
  return out;
}

std::optional<uint64_t> parse_hex(std::string_view v) {
  v = trim(v);
  if (starts_with(v, "0x") || starts_with(v, "0X")) v.remove_prefix(2);
  if (v.empty()) return std::nullopt;
  uint64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out, 16);
  if (ec != std::errc() || p == v.data()) return std::nullopt;
  return out;
}

std::optional<unsigned> parse_pstate(std::string_view v) {
  v = trim(v);
  if (v.size() < 2 || (v[0] != 'P' && v[0] != 'p')) return std::nullopt;
  return to_unsigned(parse_u64(v.substr(1)));
}

std::optional<bool> parse_bool(std::string_view v) {
  v = trim(v);
  if (is_na(v)) return std::nullopt;
  if (iequals(v, "yes") || iequals(v, "enabled") || iequals(v, "active") || iequals(v, "on") ||
      iequals(v, "true"))
    return true;
  if (iequals(v, "no") || iequals(v, "disabled") || iequals(v, "not active") || iequals(v, "off") ||
      iequals(v, "false"))
    return false;
  return std::nullopt;
}

namespace {
// Fast path for "612.34 W" / "70123 MiB": digits and an optional fraction of up to 6 digits.
std::optional<std::pair<double, std::string_view>> simple_number(std::string_view v) {
  size_t used = 0;
  const uint64_t whole = leading_digits(v, used);
  if (used == 0 || used >= 16) return std::nullopt;
  double num = static_cast<double>(whole);
  size_t i = used;
  if (i < v.size() && v[i] == '.') {
    size_t fused = 0;
    const uint64_t frac = leading_digits(v.substr(i + 1), fused);
    static constexpr double kScale[] = {1, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6};
    if (fused > 6) return std::nullopt;
    num += static_cast<double>(frac) * kScale[fused];
    i += 1 + fused;
  }
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) return std::nullopt;
  return std::make_pair(num, trim(v.substr(i)));
}

// Splits "23028 MiB" into number and unit.
std::optional<std::pair<double, std::string_view>> number_and_unit(std::string_view v) {
  v = trim(v);
  if (v.empty()) return std::nullopt;
  if (auto fast = simple_number(v)) return fast;
  double num = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), num);
  // from_chars reads "inf" and "nan": no reading is either.
  if (ec != std::errc() || p == v.data() || !std::isfinite(num)) return std::nullopt;
  return std::make_pair(num,
                        trim(std::string_view(p, static_cast<size_t>(v.data() + v.size() - p))));
}
// Rounds a non-negative finite value to uint64, nullopt when it does not fit (converting a
// double beyond 2^64 is undefined behaviour, not a saturation).
std::optional<uint64_t> to_u64_rounded(double v) {
  v += 0.5;
  if (!(v >= 0) || v >= 18446744073709551616.0) return std::nullopt;
  return static_cast<uint64_t>(v);
}
}  // namespace

std::optional<uint64_t> parse_mem_bytes(std::string_view v) {
  auto nu = number_and_unit(v);
  if (!nu || nu->first < 0) return std::nullopt;
  const auto unit = nu->second;
  double mult = 1024.0 * 1024.0;
  if (unit == "GiB" || unit == "GB")
    mult = 1024.0 * 1024.0 * 1024.0;
  else if (unit == "KiB" || unit == "KB")
    mult = 1024.0;
  else if (unit == "B")
    mult = 1.0;
  return to_u64_rounded(nu->first * mult);
}

std::optional<uint32_t> parse_watts_mw(std::string_view v) {
  auto nu = number_and_unit(v);
  if (!nu || nu->first < 0 || nu->first > 4.0e6) return std::nullopt;
  const double mult = nu->second == "mW" ? 1.0 : 1000.0;
  return static_cast<uint32_t>(nu->first * mult + 0.5);
}

std::optional<uint64_t> parse_duration_ns(std::string_view v) {
  auto nu = number_and_unit(v);
  if (!nu || nu->first < 0) return std::nullopt;
  const auto unit = nu->second;
  double mult = 1000.0;  // us, nvidia-smi's unit for event-reason counters
  if (unit == "ns")
    mult = 1.0;
  else if (unit == "ms")
    mult = 1.0e6;
  else if (unit == "s")
    mult = 1.0e9;
  return to_u64_rounded(nu->first * mult);
}

std::vector<std::string_view> split_columns(std::string_view s, size_t min_gap) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) break;
    size_t e = i;
    while (e < s.size()) {
      if (s[e] == '\t') break;
      if (s[e] == ' ') {
        size_t run = 0;
        while (e + run < s.size() && s[e + run] == ' ') ++run;
        if (run >= min_gap) break;
        e += run;
        continue;
      }
      ++e;
    }
    out.push_back(s.substr(i, e - i));
    i = e;
  }
  return out;
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    const size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    if (i > b) out.push_back(s.substr(b, i - b));
  }
  return out;
}

unsigned month_from_abbrev(std::string_view s) {
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (unsigned i = 0; i < 12; ++i)
    if (s == kMonths[i]) return i + 1;
  return 0;
}

namespace {

// Per month, the abbreviations of en, de, fr, es, it, pt, nl, pl, ru (lower case; the non-ASCII
// ones as journalctl writes them in UTF-8; Russian upper case is not folded), sorted by word
// for a binary search.
std::vector<std::pair<std::string_view, unsigned>> month_words() {
  static constexpr std::array<std::string_view, 12> kWords = {
      "jan janv ene gen sty янв",
      "feb fév févr fev lut фев",
      "mar mär mrz mars mrt мар",
      "apr avr avril abr kwi апр",
      "may mai mag mei maj мая май",
      "jun juin giu cze июн",
      "jul juil lug lip июл",
      "aug août ago sie авг",
      "sep sept set wrz сен",
      "oct okt out ott paź paz окт",
      "nov lis ноя",
      "dec dez déc dic gru дек",
  };
  std::vector<std::pair<std::string_view, unsigned>> out;
  for (unsigned m = 0; m < 12; ++m)
    for (std::string_view w : words(kWords[m])) out.emplace_back(w, m + 1);
  std::sort(out.begin(), out.end());
  return out;
}

// "Jan".."Dec" as syslog writes them, by first letter (a switch, not twelve compares: this
// runs on every line of a journal).
unsigned english_month(char a, char b, char c) {
  auto is = [&](const char* w) { return b == w[1] && c == w[2]; };
  switch (a) {
    case 'J':
      return is("Jan") ? 1 : is("Jun") ? 6 : is("Jul") ? 7 : 0;
    case 'F':
      return is("Feb") ? 2 : 0;
    case 'M':
      return is("Mar") ? 3 : is("May") ? 5 : 0;
    case 'A':
      return is("Apr") ? 4 : is("Aug") ? 8 : 0;
    case 'S':
      return is("Sep") ? 9 : 0;
    case 'O':
      return is("Oct") ? 10 : 0;
    case 'N':
      return is("Nov") ? 11 : 0;
    case 'D':
      return is("Dec") ? 12 : 0;
    default:
      return 0;
  }
}

}  // namespace

unsigned month_word(std::string_view s, size_t& len) {
  // The common case without the walk below: "Dec 5 ..." (syslog's own; a month found is
  // three letters, so the walk would stop at s[3] too).
  if (s.size() > 3 && s[3] == ' ')
    if (const unsigned m = english_month(s[0], s[1], s[2]); m != 0) {
      len = 3;
      return m;
    }
  len = 0;
  while (len < s.size() && len < 12 && s[len] != ' ' && s[len] != '\t') ++len;
  if (len < 3 || len >= 12 || len == s.size()) return 0;
  // Chinese and Japanese "4月", Korean "4월" (journalctl in those locales).
  if (s[0] >= '0' && s[0] <= '9') {
    const size_t d = s[1] >= '0' && s[1] <= '9' ? 2 : 1;
    const unsigned m = d == 2 ? static_cast<unsigned>((s[0] - '0') * 10 + (s[1] - '0'))
                              : static_cast<unsigned>(s[0] - '0');
    const std::string_view unit = s.substr(d, len - d);
    return m >= 1 && m <= 12 && (unit == "\xE6\x9C\x88" || unit == "\xEC\x9B\x94") ? m : 0;
  }
  // An English abbreviation as syslog writes it, before a tab ("Dec\t5").
  if (len == 3)
    if (const unsigned m = english_month(s[0], s[1], s[2]); m != 0) return m;
  // The word folded to ASCII lower case, on the stack: this runs on every syslog line, and on
  // every word a log prefix begins with ("gpu-node-17", "NVRM:"). The words are letters (some
  // UTF-8) of up to 6 bytes, maybe with a '.': anything else is no month, without the search.
  if (len > 7) return 0;
  char buf[12];
  size_t n = 0;
  for (size_t i = 0; i < len; ++i) {
    const char c = s[i];
    const char low = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    if (static_cast<unsigned char>(c) < 0x80 && !(low >= 'a' && low <= 'z') &&
        !(c == '.' && i + 1 == len))
      return 0;
    buf[n++] = low;
  }
  if (buf[n - 1] == '.') --n;
  const std::string_view key(buf, n);
  static const std::vector<std::pair<std::string_view, unsigned>> kIndex = month_words();
  const auto it = std::lower_bound(kIndex.begin(), kIndex.end(), key,
                                   [](const auto& e, std::string_view k) { return e.first < k; });
  return it != kIndex.end() && it->first == key ? it->second : 0;
}

std::optional<int64_t> parse_ctime_ms(std::string_view s) {
  // "Wed Sep 25 10:40:24 2024": weekday, month, day, hh:mm:ss, year.
  s = trim(s);
  if (s.size() < 24) return std::nullopt;
  const unsigned mon = month_from_abbrev(s.substr(4, 3));
  if (mon == 0) return std::nullopt;
  std::string_view rest = trim(s.substr(7));
  unsigned day = 0, hh = 0, mm = 0, ss = 0;
  int64_t year = 0;
  auto rd = [&](auto& out, std::string_view& r) {
    r = trim(r);
    auto [p, ec] = std::from_chars(r.data(), r.data() + r.size(), out);
    if (ec != std::errc()) return false;
    r.remove_prefix(static_cast<size_t>(p - r.data()));
    if (!r.empty() && r.front() == ':') r.remove_prefix(1);
    return true;
  };
  if (!rd(day, rest) || !rd(hh, rest) || !rd(mm, rest) || !rd(ss, rest) || !rd(year, rest))
    return std::nullopt;
  // Four-digit years only: a huge year overflowed the day arithmetic.
  if (day < 1 || day > 31 || hh > 23 || mm > 59 || ss > 60 || year < 1 || year > 9999)
    return std::nullopt;
  const int64_t days = days_from_civil(year, mon, day);
  return ((days * 24 + hh) * 60 + mm) * 60000 + static_cast<int64_t>(ss) * 1000;
}

#if defined(__x86_64__)
namespace {
// count_newlines 32 bytes a step: the SSE2 loop's counters at twice the width. The kernel-log
// parser counts the lines between its anchors with it: ~6 % of a big dmesg log's CPU on an
// AVX-512 EPYC with the SSE2 loop (docs/perf/parse.md).
__attribute__((target("avx2"))) size_t count_newlines_avx2(const char* p, size_t n, size_t& i) {
  size_t count = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  while (i + 32 <= n) {
    const size_t steps = std::min<size_t>((n - i) / 32, 255);
    __m256i acc = _mm256_setzero_si256();
    for (size_t k = 0; k < steps; ++k, i += 32) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
      acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(v, nl));
    }
    const __m256i sums = _mm256_sad_epu8(acc, _mm256_setzero_si256());
    count += static_cast<size_t>(_mm256_extract_epi64(sums, 0)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 1)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 2)) +
             static_cast<size_t>(_mm256_extract_epi64(sums, 3));
  }
  return count;
}
}  // namespace
#endif

size_t count_newlines(const char* p, size_t n) {
  size_t count = 0;
  size_t i = 0;
#if defined(__x86_64__)
  if (n >= 64 && cpu::has_avx2()) count = count_newlines_avx2(p, n, i);
#endif
#if defined(__SSE2__)
  // 16 bytes a step: each '\n' compares to 0xFF (-1), subtracted into per-byte counters that
  // are summed (psadbw) before they could wrap at 255 steps.
  const __m128i nl = _mm_set1_epi8('\n');
  while (i + 16 <= n) {
    const size_t steps = std::min<size_t>((n - i) / 16, 255);
    __m128i acc = _mm_setzero_si128();
    for (size_t k = 0; k < steps; ++k, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
    }
    const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    count += static_cast<size_t>(_mm_extract_epi16(sums, 0)) +
             static_cast<size_t>(_mm_extract_epi16(sums, 4));
  }
#else
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kNl = kOnes * static_cast<uint64_t>('\n');
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    const uint64_t x = w ^ kNl;  // zero bytes where '\n' was
    // Exact zero-byte mask (no false positives): high bit set for each zero byte.
    const uint64_t t = ((x & 0x7f7f7f7f7f7f7f7fULL) + 0x7f7f7f7f7f7f7f7fULL) | x;
    const uint64_t zero = ~(t | 0x7f7f7f7f7f7f7f7fULL);
    // One bit (bit 7) per newline byte: summed by a multiply, not popcount (without -mpopcnt
    // that is a libgcc call).
    count += static_cast<size_t>(((zero >> 7) * kOnes) >> 56);
  }
#endif
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}

std::optional<std::string> cuda_int_version(std::string_view v) {
  const auto n = parse_u64(trim(v));
  if (!n || *n < 1000 || *n > 99990) return std::nullopt;
  return std::to_string(*n / 1000) + "." + std::to_string(*n % 1000 / 10);
}

}  // namespace gw::text
