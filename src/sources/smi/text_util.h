// Small allocation-free helpers shared by the capture parsers: line iteration (LF or CRLF),
// trimming, BOM/ANSI handling, and number parsing that treats "N/A"-style values as unknown.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/civil_date.h"

namespace gw::text {

inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
// s.find(what, from), 16 bytes a step: positions where both the first and the last byte of
// `what` match are compared whole. std::string_view::find stops at every byte equal to the
// first one: it is the better one for a needle that starts with a rare byte ("NVRM", "Xid"),
// this one for needles that start with a common letter ("time", "data") or a space.
size_t find(std::string_view s, std::string_view what, size_t from = 0);
// Whether `what` occurs anywhere in `s`.
inline bool has(std::string_view s, std::string_view what) {
  return s.find(what) != std::string_view::npos;
}
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

inline bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
inline bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool iequals(std::string_view a, std::string_view b);
// A copy with A-Z lowered (other bytes as they are): for case-blind phrase searches.
std::string ascii_lower(std::string_view s);

// Drops a UTF-8 byte-order mark.
inline std::string_view strip_bom(std::string_view s) {
  return starts_with(s, "\xEF\xBB\xBF") ? s.substr(3) : s;
}

// "[...]", "...", "[…]": the mark people leave where they cut lines out of a paste.
inline bool is_elision_line(std::string_view trimmed) {
  return trimmed == "[...]" || trimmed == "..." || trimmed == "[\xE2\x80\xA6]" ||
         trimmed == "\xE2\x80\xA6" || trimmed == "[ ... ]" || trimmed == "(...)";
}

// Removes ANSI escape sequences (ESC [ ... letter) from one line.
// Where " (UUID: ...)" closes a line of `nvidia-smi -L` or `nvlink -s` ("GPU 0: NAME (UUID:
// GPU-...)"); npos if it does not. A paste may redact the UUID ("...", "<redacted>", "GPU-xxxx"),
// so whatever stands inside the parentheses is taken.
inline size_t uuid_suffix(std::string_view s) {
  const size_t p = s.rfind(" (UUID: ");
  return p != std::string_view::npos && ends_with(s, ")") ? p : std::string_view::npos;
}

std::string strip_ansi(std::string_view s);
inline bool has_escape(std::string_view s) {
  return s.find('\x1b') != std::string_view::npos;
}

// The words of `s` into `out` (cleared first): runs of characters between spaces and tabs
// (split_words), or between any is_space character (split_words_any_space). 16 bytes a step
// where SSE2 is there: a dmon log of days splits every row.
void split_words(std::string_view s, std::vector<std::string_view>& out);
void split_words_any_space(std::string_view s, std::vector<std::string_view>& out);

// The words of a row of at most 127 bytes as bits: where each begins, and where the blank after
// it is (or the row's end), bytes 0-63 and 64-127. For the readers of long tables (dmon logs),
// which take each word where it stands instead of gathering them in a vector. Four words, not
// two 128-bit ones: GCC kept those in memory, and reading them back stalled.
struct RowWords {
  uint64_t starts0 = 0, starts1 = 0, ends0 = 0, ends1 = 0;
  bool empty() const { return (starts0 | starts1) == 0; }
  bool operator==(const RowWords&) const = default;
  // The next word, [b, e) of the row; false when none is left.
  bool next(size_t& b, size_t& e) {
    if (starts0 != 0) {
      b = static_cast<size_t>(__builtin_ctzll(starts0));
      starts0 &= starts0 - 1;
    } else if (starts1 != 0) {
      b = 64 + static_cast<size_t>(__builtin_ctzll(starts1));
      starts1 &= starts1 - 1;
    } else {
      return false;
    }
    if (ends0 != 0) {  // a word's end follows its start: one is left while a start is
      e = static_cast<size_t>(__builtin_ctzll(ends0));
      ends0 &= ends0 - 1;
    } else {
      e = 64 + static_cast<size_t>(__builtin_ctzll(ends1));
      ends1 &= ends1 - 1;
    }
    return true;
  }
};
// The words of the line at p, trimmed (text::trim), as RowWords, and its '\n' found
// in the same pass: false when there is no '\n' in the first 128 bytes, or a '\r' that trim
// would drop begins the first word or ends the last. `nl`: where the '\n' is; `len`: where the
// last word ends (0: a blank line).
bool line_words(const char* p, RowWords& w, size_t& nl, size_t& len);
// line_words with split_words_any_space's words (any is_space byte a blank; it never declines
// for a '\r').
bool line_words_any_space(const char* p, RowWords& w, size_t& nl, size_t& len);

// A reader that finds its own block's end as it reads (a dmon log of days is one block of
// millions of rows: read once, not once to find its end and again to read it) stops before a
// header's first line ('#') once `piece` bytes are read, the block going on in the next piece
// (so that the bytes behind can be handed back), and at `max_block` bytes (no tool prints a
// block that long: what follows is read as if nothing came before it).
struct BlockLimits {
  size_t piece = 0, max_block = 0;
};
struct BlockStop {
  size_t end = 0;        // past the block's last line that fits
  size_t last_line = 0;  // that line's number
  bool more = false;     // stopped at a piece's end: the block goes on
  size_t cut_line = 0;   // stopped at max_block: the first line of the block left out, else 0
};

// The lines of the block that starts at text[begin] (line `first_line`, the block's first
// whatever it holds), while they fit it, blank lines inside, as BlockLimits says. Each line
// goes first to `fast(p, left, no)`, which may take a line that fits and is no header line,
// whole and untrimmed (`left` bytes readable from p), and returns how many bytes it took with
// its '\n' (0: not taken); the others are trimmed, tested with `fits(t)` and given to
// `line(t, no)`.
template <class Fast, class Fits, class Line>
void walk_block(std::string_view text, size_t begin, size_t first_line, const BlockLimits& limits,
                Fast&& fast, Fits&& fits, Line&& line, BlockStop& stop);

// Iterates lines without copying; strips a trailing '\r'. line_no() is 1-based.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line);
  // The next line when its length up to its '\n' (or the text's end) is known: what next()
  // would give, without searching for the '\n' again.
  void take(size_t len, std::string_view& line) {  // inline: once per row of a big CSV log
    const char* base = text_.data() + pos_;
    pos_ += len < text_.size() - pos_ ? len + 1 : len;  // the '\n' after the line, if any
    if (len > 0 && base[len - 1] == '\r') --len;
    line = std::string_view(base, len);
    ++line_no_;
  }
  size_t line_no() const { return line_no_; }
  size_t offset() const { return pos_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t line_no_ = 0;
};

// True for the ways nvidia-smi says "no value": N/A, [N/A], [Not Supported], Unknown Error,
// "Requested functionality has been deprecated", "Not available in WDDM driver model", "-".
bool is_na(std::string_view v);

// What a value says when the tool could not read it (not "no value": N/A and Not Supported are
// not failures): "[Unknown Error]", "ERR!", "[GPU requires reset]", "[GPU is lost]".
enum class FailedReading : uint8_t { kNone, kFailed, kResetRequired, kLost };
FailedReading failed_reading(std::string_view v);

// Plain decimal digits at the start of s (hot path of big CSV logs; no locale, no library
// call). Sets `used` to the digits consumed; 0 when s does not start with a digit.
inline uint64_t leading_digits(std::string_view s, size_t& used) {
  uint64_t out = 0;
  size_t i = 0;
  for (; i < s.size() && i < 19; ++i) {
    const unsigned d = static_cast<unsigned>(s[i]) - static_cast<unsigned>('0');
    if (d > 9) break;
    out = out * 10 + d;
  }
  used = i;
  return out;
}

std::optional<uint64_t> parse_u64_slow(std::string_view v);

// Leading number of a value like "43.89 W", "16x", "0x1F", "P8". nullopt when absent/N/A.
inline std::optional<uint64_t> parse_u64(std::string_view v) {
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  size_t used = 0;
  const uint64_t n = leading_digits(v, used);
  // "0x..." and 19+ digit numbers take the careful path.
  if (used > 0 && used < 19 && !(used == 1 && v.size() > 1 && (v[1] == 'x' || v[1] == 'X')))
    return n;
  return parse_u64_slow(v);
}
std::optional<int64_t> parse_i64(std::string_view v);
std::optional<double> parse_double(std::string_view v);
std::optional<uint64_t> parse_hex(std::string_view v);     // "0x00000000000001FF"
std::optional<unsigned> parse_pstate(std::string_view v);  // "P8" -> 8
std::optional<bool> parse_bool(
    std::string_view v);  // Yes/No, Enabled/Disabled, Active/Not Active, On/Off

// Inline: out of line, the call and its optional in memory were a tenth of a dmon log's time.
inline std::optional<unsigned> to_unsigned(std::optional<uint64_t> v) {
  if (!v || *v > 0xffffffffULL) return std::nullopt;
  return static_cast<unsigned>(*v);
}
inline std::optional<int> to_int(std::optional<int64_t> v) {
  if (!v || *v > 0x7fffffffLL || *v < -0x7fffffffLL) return std::nullopt;
  return static_cast<int>(*v);
}

// "23028 MiB" -> bytes; units MiB (default), GiB, KiB, MB, GB, B.
std::optional<uint64_t> parse_mem_bytes(std::string_view v);
// "43.89 W" -> 43890 mW.
std::optional<uint32_t> parse_watts_mw(std::string_view v);
// "834002687 us" -> ns; "12 ms", "3 s" also accepted.
std::optional<uint64_t> parse_duration_ns(std::string_view v);

// The blank- or tab-separated words of a line, as views into it.
std::vector<std::string_view> words(std::string_view s);
// The columns of a padded table row: cells split at tabs and at runs of `min_gap` or more
// spaces ("512.00 Mb" keeps its one space with min_gap 2; kubectl pads with at least three,
// and a header's "NODE SELECTOR" has one).
std::vector<std::string_view> split_columns(std::string_view s, size_t min_gap);

using gw::days_from_civil;
// "Jan".."Dec" -> 1..12, 0 when not a month.
unsigned month_from_abbrev(std::string_view s);
// The month word at the start of `s` as strftime's %b writes it in the C locale and the common
// European ones ("Aug", "aug", "août", "juil.", "Mär", "ago", "авг") and the CJK "4月" / "4월":
// 1..12 and its length in bytes (up to the first blank), 0 when the word is not a month.
unsigned month_word(std::string_view s, size_t& len);
// "Wed Sep 25 10:40:24 2024" (ctime, as nvidia-smi and dmesg -T print) -> epoch ms (UTC).
std::optional<int64_t> parse_ctime_ms(std::string_view s);

// Counts '\n' in [p, p+n): 8 bytes at a time, used to keep line numbers while skipping.
size_t count_newlines(const char* p, size_t n);

// CUDA's integer version as the runtime and driver APIs give it (1000 x major + 10 x minor):
// "12040" -> "12.4"; nullopt outside 1000..99990.
std::optional<std::string> cuda_int_version(std::string_view v);

template <class Fast, class Fits, class Line>
void walk_block(std::string_view text, size_t begin, size_t first_line, const BlockLimits& limits,
                Fast&& fast, Fits&& fits, Line&& line, BlockStop& stop) {
  stop = BlockStop{};
  size_t pos = begin, no = first_line - 1;
  bool after_hash = false;
  while (pos < text.size()) {
    const char* const p = text.data() + pos;
    const size_t left = text.size() - pos, into = pos - begin;
    ++no;
    if (no > first_line && into < limits.max_block) {
      if (const size_t took = fast(p, left, no); took != 0) {
        after_hash = false;
        pos += took;
        stop.end = pos;
        stop.last_line = no;
        continue;
      }
    }
    const void* nl = std::memchr(p, '\n', left);
    const size_t len = nl ? static_cast<size_t>(static_cast<const char*>(nl) - p) : left;
    const std::string_view t = trim(std::string_view(p, len));
    pos = nl ? pos + len + 1 : text.size();
    if (t.empty()) continue;
    const bool hash = t.front() == '#';
    if (no > first_line) {  // the first line is the block's: its start was found
      if (!fits(t)) break;
      if (into >= limits.piece && hash && !after_hash) {  // a header is two lines: names, units
        stop.more = true;
        break;
      }
      if (into >= limits.max_block) {
        stop.cut_line = no;
        break;
      }
    }
    after_hash = hash;
    stop.end = pos;
    stop.last_line = no;
    line(t, no);
  }
}

}  // namespace gw::text
