// DCGM text readers (see dcgm_text.h). The diag table's layout is fixed by dcgmi: a 27-column
// name field between '|' (or '+') at columns 0 and 28, results "Pass", "Fail - GPU: 0",
// "Pass - GPUs: 1, 2", "Skip - All", and wrapped text rows ("Warning", "Info", "Error") whose
// continuation rows leave the name field empty. Wrapped text is cut every 45 characters,
// mid-word included, so chunks are joined as they are.
#include "sources/dcgm/dcgm_text.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <utility>

#include "core/dcgm_fields.h"
#include "sources/dcgm/diag_json.h"
#include "sources/dcgm/dmon_shapes.h"
#include "sources/smi/text_util.h"

namespace gw::dcgm {

namespace {

using text::is_digit;

constexpr size_t kNameCol = 28;  // column of the '|' after the name field
constexpr size_t kChunk = 45;    // characters of wrapped text per row

std::string at(std::string_view origin, size_t line) {
  return std::string(origin) + ":" + std::to_string(line);
}

bool diag_row(std::string_view t) {
  return t.size() > kNameCol && (t[0] == '|' || t[0] == '+') &&
         (t[kNameCol] == '|' || t[kNameCol] == '+');
}

// "-----  Hardware  ----------" -> "Hardware".
std::optional<std::string> category(std::string_view name) {
  const size_t word_at = name.find_first_not_of('-');
  if (!text::starts_with(name, "-----") || word_at == std::string_view::npos) return std::nullopt;
  const auto inner = text::trim(name.substr(word_at));
  const size_t end = inner.find("  ");
  const auto word = text::trim(inner.substr(0, end));
  if (word.empty() || word.front() == '-') return std::nullopt;
  return std::string(word);
}

// Unsigned numbers in "GPU: 0", "GPUs: 1, 2, 3", "GPU 3".
std::vector<unsigned> numbers(std::string_view s) {
  std::vector<unsigned> out;
  size_t i = 0;
  while (i < s.size()) {
    if (!is_digit(s[i])) {
      ++i;
      continue;
    }
    size_t used = 0;
    out.push_back(static_cast<unsigned>(text::leading_digits(s.substr(i), used)));
    i += used;
  }
  return out;
}

// One result statement of a test: "Fail - GPU: 0", "Pass - All", "Skip", "FAIL - GPU 3: why".
struct Verdict {
  DcgmKind kind = DcgmKind::kDiagPass;
  std::vector<unsigned> gpus;  // empty: all
  std::string why;             // text after "GPU N:" in the old one-line form
};

std::optional<Verdict> verdict(std::string_view v) {
  const std::pair<std::string_view, DcgmKind> kWords[] = {{"Pass", DcgmKind::kDiagPass},
                                                          {"Fail", DcgmKind::kDiagFail},
                                                          {"Warn", DcgmKind::kDiagWarn},
                                                          {"Skip", DcgmKind::kDiagSkip}};
  for (const auto& [w, k] : kWords) {
    if (v.size() < w.size() || !text::iequals(v.substr(0, w.size()), w)) continue;
    auto rest = text::trim(v.substr(w.size()));
    if (!rest.empty() && rest.front() == '-') rest = text::trim(rest.substr(1));
    Verdict out{k, {}, {}};
    if (text::starts_with(rest, "GPU")) {
      const size_t colon = rest.find(':', rest.find_first_of("0123456789"));
      const auto ids = colon == std::string_view::npos ? rest : rest.substr(0, colon);
      out.gpus = numbers(ids);
      if (colon != std::string_view::npos)
        out.why = std::string(text::trim(rest.substr(colon + 1)));
    } else if (!rest.empty() && !text::iequals(rest, "All")) {
      return std::nullopt;  // "Pass" followed by something that is no GPU list
    }
    return out;
  }
  return std::nullopt;
}

// The diag table read row by row: tests with their verdicts and the text rows after them.
class DiagTable {
 public:
  DiagTable(std::string_view origin, size_t first_line) : origin_(origin), line_(first_line) {}
  void row(std::string_view t);
  BlockInfo finish(std::vector<DcgmResult>& out);

 private:
  struct Text {
    std::string kind;  // "Warning", "Info", "Error"
    std::string text;
  };
  struct Test {
    std::string name, cat;
    size_t line = 0;
    std::vector<Verdict> verdicts;
    std::vector<Text> texts;
  };
  void text_row(std::string_view name, std::string_view raw);
  void emit(const Test& t, std::vector<DcgmResult>& out) const;

  std::string_view origin_;
  size_t line_;
  std::string cat_;
  std::vector<Test> tests_;
  bool closed_ = false, results_ = false, header_ = false;
  // A table is read to its end whatever its length, but keeps at most this much (DCGM's own
  // tables hold a few dozen tests): the rows past it are counted (BlockInfo::cut).
  static constexpr size_t kMaxTests = 1024, kMaxTexts = 64, kMaxTextBytes = 4096;
  size_t rows_left_out_ = 0;
};

void DiagTable::text_row(std::string_view name, std::string_view raw) {
  if (rows_left_out_ > 0) {
    ++rows_left_out_;  // the rows of a test past kMaxTests
    return;
  }
  if (tests_.empty()) tests_.push_back({cat_, cat_, line_, {}, {}});
  Test& t = tests_.back();
  std::string_view chunk = raw;
  if (!chunk.empty() && chunk.front() == ' ') chunk.remove_prefix(1);
  if (chunk.size() > kChunk) chunk = chunk.substr(0, kChunk);
  if (!name.empty() || t.texts.empty()) {
    if (t.texts.size() == kMaxTexts) {
      ++rows_left_out_;
      return;
    }
    t.texts.push_back({std::string(name), {}});
  }
  if (t.texts.back().text.size() < kMaxTextBytes) t.texts.back().text += chunk;
}

void DiagTable::row(std::string_view t) {
  const size_t no = line_++;
  if (t.size() <= kNameCol) {
    closed_ = false;  // a row cut inside its name field
    return;
  }
  const auto name = text::trim(t.substr(1, kNameCol - 1));
  if (auto c = category(name)) {
    cat_ = *c;
    closed_ = false;
    return;
  }
  if (t[0] == '+') {  // a border: the last one closes the table
    closed_ = results_ && t.find('=') == std::string_view::npos;
    return;
  }
  closed_ = false;
  std::string_view raw = t.substr(kNameCol + 1);
  if (raw.size() > 0 && raw.back() == '|') raw.remove_suffix(1);
  const auto value = text::trim(raw);
  if (name == "Diagnostic" && value == "Result") {
    header_ = true;
    return;
  }
  if (name == "Warning" || name == "Info" || name == "Error") return text_row(name, raw);
  if (cat_ == "Metadata") return;
  const auto v = verdict(value);
  if (name.empty()) {
    if (v && !tests_.empty() && rows_left_out_ == 0) {
      if (tests_.back().verdicts.size() < kMaxTexts) tests_.back().verdicts.push_back(*v);
      return;
    }
    return text_row(name, raw);
  }
  if (tests_.size() == kMaxTests || rows_left_out_ > 0) {
    ++rows_left_out_;
    return;
  }
  tests_.push_back({std::string(name), cat_, no, {}, {}});
  results_ = true;
  if (v) tests_.back().verdicts.push_back(*v);
}

std::string clean(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// The text rows that name this GPU ("GPU 3 ..."), or all of them when none names any.
std::string text_for(const std::vector<std::pair<std::string, std::string>>& texts,
                     std::optional<unsigned> gpu) {
  std::string named, all;
  for (const auto& [kind, t] : texts) {
    if (kind == "Info") continue;
    all += (all.empty() ? "" : " | ") + t;
    if (gpu && t.rfind("GPU " + std::to_string(*gpu), 0) == 0)
      named += (named.empty() ? "" : " | ") + t;
  }
  return named.empty() ? all : named;
}

void DiagTable::emit(const Test& t, std::vector<DcgmResult>& out) const {
  std::vector<std::pair<std::string, std::string>> texts;
  for (const auto& x : t.texts) texts.push_back({x.kind, clean(x.text)});
  auto push = [&](DcgmKind k, std::optional<unsigned> gpu, const std::string& why) {
    DcgmResult r;
    r.kind = k;
    r.gpu = gpu;
    r.part = "dcgmi diag";
    r.test = t.cat.empty() || t.name == t.cat ? t.name : t.cat + " / " + t.name;
    r.text = why.empty() ? text_for(texts, gpu) : why;
    r.origin = at(origin_, t.line);
    out.push_back(std::move(r));
  };
  for (const auto& v : t.verdicts) {
    if (v.kind == DcgmKind::kDiagPass) continue;
    if (v.gpus.empty()) push(v.kind, std::nullopt, v.why);
    for (unsigned g : v.gpus) push(v.kind, g, v.why);
  }
  // An "Error" row is a failure of the test (or deployment check) it stands under.
  for (const auto& x : t.texts) {
    if (x.kind != "Error") continue;
    const auto ids = numbers(clean(x.text).substr(0, 8));
    push(DcgmKind::kDiagFail, ids.empty() ? std::nullopt : std::optional<unsigned>(ids[0]),
         clean(x.text));
  }
}

BlockInfo DiagTable::finish(std::vector<DcgmResult>& out) {
  BlockInfo info;
  const size_t before = out.size();
  for (const Test& t : tests_) emit(t, out);
  info.recognised = results_ || header_ || !tests_.empty() || !cat_.empty();
  bool bad = false;
  for (size_t i = before; i < out.size(); ++i)
    bad = bad || out[i].kind == DcgmKind::kDiagFail || out[i].kind == DcgmKind::kDiagWarn;
  if (results_ && !bad) {
    DcgmResult pass;
    pass.kind = DcgmKind::kDiagPass;
    pass.part = "dcgmi diag";
    pass.text = "no test failed or warned in the results shown";
    pass.origin = at(origin_, tests_.front().line);
    out.push_back(std::move(pass));
  }
  if (!closed_) info.cut = "dcgmi diag table cut before its end";
  if (rows_left_out_ > 0)
    info.cut += (info.cut.empty() ? "" : "; ") + std::string("dcgmi diag table of ") +
                std::to_string(kMaxTests) + " tests or more: " + std::to_string(rows_left_out_) +
                " row(s) after them not read";
  return info;
}

// ---- nvlink --link-status grid ----

BlockInfo read_grid(std::string_view block, std::string_view origin, size_t first_line,
                    std::vector<DcgmResult>& out) {
  BlockInfo info;
  text::LineReader rd(block);
  std::string_view line;
  std::optional<unsigned> gpu;
  size_t no = first_line - 1;
  bool key = false;
  while (rd.next(line)) {
    ++no;
    const auto t = text::trim(line);
    if (text::starts_with(t, "gpuId ")) {
      gpu = numbers(t.substr(6, 4)).empty() ? std::nullopt
                                            : std::optional<unsigned>(numbers(t.substr(6, 4))[0]);
      continue;
    }
    if (text::starts_with(t, "NvSwitches")) gpu.reset();
    if (text::starts_with(t, "Key:")) key = true;
    if (t == "No NvSwitches found.") {
      DcgmResult none;
      none.kind = DcgmKind::kReading;
      none.part = "dcgmi nvlink";
      none.test = "NvSwitches";
      none.text = "none found";
      none.origin = at(origin, no);
      none.block = at(origin, first_line);
      out.push_back(std::move(none));
    }
    if (!gpu || t.empty() || t.find_first_not_of("UDX_ ") != std::string_view::npos) continue;
    DcgmResult r;
    r.kind = DcgmKind::kNvlinkDown;
    r.gpu = gpu;
    r.part = "dcgmi nvlink";
    unsigned up = 0, listed = 0;  // listed: links other than Not Supported
    for (char c : t) {
      if (c == ' ') continue;
      ++r.of;
      if (c == 'D') ++r.count;
      if (c == 'U') ++up;
      if (c != '_') ++listed;
    }
    r.text = std::string(t);
    r.origin = at(origin, no);
    info.recognised = true;
    // Every GPU's row is a reading too: "U U U ..." with the links Up of those supported.
    DcgmResult links = r;
    links.kind = DcgmKind::kReading;
    links.test = "NVLink links";
    links.count = up;
    links.of = listed;
    links.block = at(origin, first_line);
    out.push_back(std::move(links));
    if (r.count > 0) out.push_back(std::move(r));
  }
  if (!key && info.recognised) info.cut = "dcgmi nvlink grid cut before its key line";
  return info;
}

// ---- dmon ----

bool two_cells(std::string_view t, std::string_view& left, std::string_view& right);

bool na(std::string_view v) {
  return v == "N/A" || v == "N/S" || text::starts_with(v, "Not ");
}

// "12", "0.888", "-71.5": a decimal of at most 15 digits, no exponent, and not hexadecimal
// ("0x1f"). Such decimals compare exactly as integers scaled to the same decimals, and in the
// same order as the doubles strtod makes of them (15 digits survive the round trip), so a dmon
// of days compares most of its cells without a double.
struct Decimal {
  int64_t m = 0;          // the digits, signed
  unsigned decimals = 0;  // digits after the point
};

// One pass over the digits and the point (this runs on every cell of a dmon log); a number
// ends at anything else, as strtod's does ("71.5W" is 71.5).
bool plain_decimal(std::string_view v, Decimal& out) {
  const char* p = v.data();
  const char* const e = p + v.size();
  const bool neg = p < e && *p == '-';
  p += neg ? 1 : 0;
  const char* const first = p;
  uint64_t m = 0;
  const char* point = nullptr;
  for (; p < e; ++p) {
    const auto d = static_cast<unsigned>(*p) - static_cast<unsigned>('0');
    if (d <= 9) {
      m = m * 10 + d;
    } else if (*p == '.' && point == nullptr && p != first) {
      point = p;
    } else {
      break;
    }
  }
  const auto digits = static_cast<size_t>(p - first) - (point ? 1 : 0);
  if (p == first || digits > 15) return false;
  if (p < e && (*p == 'e' || *p == 'E' || *p == 'x' || *p == 'X')) return false;
  out.m = neg ? -static_cast<int64_t>(m) : static_cast<int64_t>(m);
  out.decimals = point ? static_cast<unsigned>(p - point - 1) : 0;
  return true;
}

// A cell of at most 8 bytes that is digits with at most one point, not first ("639.609", "73",
// "5."), as plain_decimal reads it, kept as its digits: zeros before them up to eight, one per
// byte, the first most significant. Two cells of equal decimals compare as their keys do, with
// no conversion: most cells of a long dmon only need to be found not above the largest so far.
struct ShortDecimal {
  uint64_t key = 0;
  unsigned decimals = 0;
};

// The cell of n bytes at p as a ShortDecimal (8 bytes readable at p), read 8 bytes at a time;
// false for any other cell, which is plain_decimal's to read.
bool short_decimal(const char* p, size_t n, ShortDecimal& out) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  if (n == 0 || n > 8) return false;
  uint64_t x = 0;
  std::memcpy(&x, p, 8);  // the first byte lowest
  x &= ~uint64_t{0} >> (64 - 8 * n);
  // The point's byte, exactly (no borrow from a byte below it).
  const uint64_t t = x ^ (kOnes * '.');
  const uint64_t point = ~(((t & (kOnes * 0x7f)) + kOnes * 0x7f) | t) & (kOnes * 0x80);
  unsigned decimals = 0;
  if (point != 0) {
    const auto k = static_cast<unsigned>(__builtin_ctzll(point)) / 8;
    if (k == 0 || (point & (point - 1)) != 0) return false;
    const uint64_t below = (uint64_t{1} << (8 * k)) - 1;
    x = (x & below) | ((x >> 8) & ~below);  // the point taken out
    --n;
    decimals = static_cast<unsigned>(n - k);
  }
  const uint64_t d = (x ^ (kOnes * '0')) & (~uint64_t{0} >> (64 - 8 * n));
  if (((((d & (kOnes * 0x7f)) + kOnes * 0x76) | d) & (kOnes * 0x80)) != 0) return false;
  out.key =
      __builtin_bswap64(d << (8 * (8 - n)));  // zeros first: the first digit lowest after them
  out.decimals = decimals;
  return true;
}

// The plain decimal a ShortDecimal is (only for a new largest: a digit at a time).
Decimal decimal_of(const ShortDecimal& s) {
  int64_t m = 0;
  for (int shift = 56; shift >= 0; shift -= 8)
    m = m * 10 + static_cast<int64_t>((s.key >> shift) & 0xff);
  return Decimal{m, s.decimals};
}

// The double strtod reads: one division of an integer below 2^53 by an exact power of ten.
double to_double(const Decimal& d) {
  return static_cast<double>(d.m) / static_cast<double>(kPow10[d.decimals]);
}

// a > b. The one with fewer decimals is scaled up to the other's; where that overflows, its
// magnitude is beyond anything of 15 digits, and its sign decides.
bool greater(const Decimal& a, const Decimal& b) {
  if (a.decimals == b.decimals) return a.m > b.m;  // a column's cells mostly write alike
  const unsigned d = std::max(a.decimals, b.decimals);
  int64_t x = 0, y = 0;
  if (__builtin_mul_overflow(a.m, kPow10[d - a.decimals], &x)) return a.m > 0;
  if (__builtin_mul_overflow(b.m, kPow10[d - b.decimals], &y)) return b.m < 0;
  return x > y;
}

// A numeric cell that is not a plain decimal ("1e3", "0x1f", "36758094563894123"; its leading
// number, as strtod reads it); false for N/A and words. from_chars: strtod through std::stod
// was a third of a long dmon's time. Hexadecimal, which from_chars does not read, keeps strtod.
std::optional<double> other_number(std::string_view v) {
  if (v.empty() || !(is_digit(v[0]) || (v[0] == '-' && v.size() > 1 && is_digit(v[1]))))
    return std::nullopt;
  const size_t digit = v[0] == '-' ? 1 : 0;
  if (v.size() > digit + 1 && v[digit] == '0' && (v[digit + 1] == 'x' || v[digit + 1] == 'X')) {
    try {
      return std::stod(std::string(v));
    } catch (...) {
      return std::nullopt;
    }
  }
  double x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  // strtod says a subnormal result is out of range ("1e-320"), which std::stod threw on.
  if (r.ec != std::errc() || (x != 0 && std::fabs(x) < std::numeric_limits<double>::min()))
    return std::nullopt;
  return x;
}

// A numeric cell ("120", "71.5", "1e3", "0x1f"); false for N/A and words.
std::optional<double> number(std::string_view v) {
  Decimal d;
  if (plain_decimal(v, d)) return to_double(d);
  return other_number(v);
}

// One field of one GPU over the block's rows: kept as one reading (dmon may run for hours).
struct FieldSeen {
  size_t first_line = 0;
  unsigned rows = 0, valued = 0;
  std::optional<double> max;
  std::optional<Decimal> max_decimal;  // the largest as a plain decimal, where it was one
  std::string max_text, last;
  // The largest as a ShortDecimal where it was one (its decimals; -1: it was not).
  uint64_t max_key = 0;
  int max_key_decimals = -1;
};

// Whether `d` is the largest so far: then it is kept as such.
bool take_if_max(FieldSeen& s, const Decimal& d, std::string_view v) {
  if (s.max && (s.max_decimal ? !greater(d, *s.max_decimal) : !(to_double(d) > *s.max)))
    return false;
  s.max = to_double(d);
  s.max_decimal = d;
  s.max_text.assign(v);
  s.max_key_decimals = -1;
  return true;
}

// A cell `v` that reads as the short decimal `k`. Inline up to the common case, a cell written
// with as many decimals as the largest so far and not above it. True when it is the new largest.
inline bool add_short(FieldSeen& s, const ShortDecimal& k, std::string_view v, size_t no) {
  if (s.rows++ == 0) s.first_line = no;
  ++s.valued;
  if (s.max_key_decimals == static_cast<int>(k.decimals) && k.key <= s.max_key) return false;
  if (!take_if_max(s, decimal_of(k), v)) return false;
  s.max_key = k.key;
  s.max_key_decimals = static_cast<int>(k.decimals);
  return true;
}

// A cell `v`, whatever it writes. True when it is the new largest.
bool add_seen(FieldSeen& s, std::string_view v, size_t no) {
  if (s.rows++ == 0) s.first_line = no;
  Decimal d;
  if (plain_decimal(v, d)) {
    ++s.valued;
    return take_if_max(s, d, v);
  }
  // The last text is shown only where no value was a number: kept for those alone.
  if (na(v)) {
    s.last.assign(v);
    return false;
  }
  ++s.valued;
  const auto x = other_number(v);
  if (!x) s.last.assign(v);
  if (!x || (s.max && !(*x > *s.max))) return false;
  s.max = x;
  s.max_decimal.reset();
  s.max_text.assign(v);
  s.max_key_decimals = -1;
  return true;
}

// The bound a field's later cells are held to in a row of a known shape (DmonShape).
CellBound bound_of(const FieldSeen* s, bool xider) {
  CellBound b;
  if (s == nullptr || !s->max) return b;
  if (xider) {
    if (*s->max >= 0) b.kind = CellBound::kZero;  // a "0" moves no largest
  } else if (s->max_decimal) {
    b = CellBound{CellBound::kMax, s->max_decimal->m, s->max_decimal->decimals};
  }
  return b;
}

void emit_readings(const std::map<std::pair<unsigned, std::string>, FieldSeen>& seen,
                   std::string_view origin, size_t first_line, std::vector<DcgmResult>& out) {
  for (const auto& [key, s] : seen) {
    DcgmResult r;
    r.kind = DcgmKind::kReading;
    r.gpu = key.first;
    r.part = "dcgmi dmon";
    r.test = key.second;
    r.text = s.valued == 0 ? "N/A" : s.max ? s.max_text : s.last;  // counters: the largest
    r.count = s.valued;
    r.of = s.rows;
    r.origin = at(origin, s.first_line);
    r.block = at(origin, first_line);
    out.push_back(std::move(r));
  }
}

// No machine has this many (GPU, field) readings: past them a new pair's values are not kept
// (a log naming ever new GPU indices would otherwise grow with its length).
constexpr size_t kMaxDmonReadings = 4096;

// Whether XIDER's cell `v` reports an Xid: a code of up to 6 digits, not 0.
bool xid_cell(std::string_view v) {
  return (v.size() != 1 || v[0] != '0') && is_digit(v[0]) && v.size() <= 6;
}

// "GPU 1 ... 120 ..." with XIDER's cell `v`: the Xid that row reports.
DcgmResult dmon_xid(unsigned gpu, std::string_view v, std::string_view row, std::string_view origin,
                    size_t no) {
  DcgmResult r;
  r.kind = DcgmKind::kXid;
  r.gpu = gpu;
  r.part = "dcgmi dmon";
  r.test = "XIDER";
  r.count = static_cast<unsigned>(std::stoul(std::string(v)));
  r.text = std::string(row);
  r.origin = at(origin, no);
  return r;
}

}  // namespace

struct DmonReadings::State {
  std::vector<std::string> cols;
  std::vector<uint8_t> xider;  // cols[c] is "XIDER"
  std::map<std::pair<unsigned, std::string>, FieldSeen> seen;
  // Each GPU's reading of each of the current header's columns, looked up once per header
  // (a map node stays where it is): a lookup per value was a fifth of a long dmon's time.
  std::unordered_map<unsigned, std::vector<FieldSeen*>> row_of;
  std::array<std::vector<FieldSeen*>*, 64> direct{};  // row_of's of GPUs 0..63, without a hash
  std::vector<std::string_view> words;                // the row being read
  size_t first_line = 0;
  bool said_full = false;

  // The shapes of the rows of GPUs 0..63 (DmonShapes), made as their rows come.
  std::array<std::unique_ptr<DmonShapes>, 64> shapes;
  std::vector<CellBound> bounds;  // the fields' bounds of the shape being made
  const FitFn fit = fit_for_this_cpu();

  void take_header(std::string_view names) {
    text::split_words(names, words);
    // dcgmi prints its header again every few intervals: the same columns keep their rows.
    if (std::equal(words.begin(), words.end(), cols.begin(), cols.end())) return;
    forget_rows();
    cols.assign(words.begin(), words.end());
    xider.assign(cols.size(), 0);
    for (size_t c = 0; c < cols.size(); ++c) xider[c] = cols[c] == "XIDER" ? 1 : 0;
  }

  // The rows found within bounds are counted in the current header's readings, and the
  // shapes made for those are forgotten.
  void forget_rows() {
    for (size_t gpu = 0; gpu < shapes.size(); ++gpu) {
      if (!shapes[gpu]) continue;
      settle(gpu);
      ++shapes[gpu]->moves;
    }
    row_of.clear();
    direct.fill(nullptr);
  }

  // A row within its shape's bounds counts one row in each of its fields, and one value where
  // its cell is no "N/A" (which is then the field's last text). Settled before any other row of
  // the GPU is read, so that such a row's text comes after.
  void settle(size_t gpu) {
    DmonShapes& g = *shapes[gpu];
    if (g.uncounted == 0) return;
    for (size_t c = 1; c < cols.size(); ++c) {
      FieldSeen& f = *(*direct[gpu])[c];  // a shape is made only where every field has one
      const size_t k = c - 1;
      const uint64_t na = k < 64 ? std::exchange(g.na_uncounted[k], 0) : 0;
      f.rows += static_cast<unsigned>(g.uncounted);
      f.valued += static_cast<unsigned>(g.uncounted - na);
      if (k < 64 && (g.na_last >> k & 1) != 0) f.last.assign("N/A");
    }
    g.uncounted = 0;
    g.na_last = 0;
  }

  // `gpu`'s readings of the current header's columns, found once per row; nullptr once the
  // readings are full (said once, in `info`).
  std::vector<FieldSeen*>* row_for(unsigned gpu, BlockInfo& info) {
    if (gpu < direct.size() && direct[gpu] != nullptr) return direct[gpu];
    auto r = row_of.find(gpu);
    if (r == row_of.end()) {
      if (row_of.size() >= kMaxDmonReadings) {
        full(info);
        return nullptr;
      }
      r = row_of.emplace(gpu, std::vector<FieldSeen*>(cols.size(), nullptr)).first;
    }
    if (gpu < direct.size()) direct[gpu] = &r->second;
    return &r->second;
  }

  // Where the values of `gpu`'s column `c` are gathered (nullptr: full).
  FieldSeen* slot(std::vector<FieldSeen*>& row, unsigned gpu, size_t c, BlockInfo& info) {
    return row[c] != nullptr ? row[c] : new_slot(row, gpu, c, info);
  }
  FieldSeen* new_slot(std::vector<FieldSeen*>& row, unsigned gpu, size_t c, BlockInfo& info) {
    auto key = std::make_pair(gpu, cols[c]);
    auto it = seen.find(key);
    if (it == seen.end() && seen.size() >= kMaxDmonReadings) return full(info);
    row[c] = it != seen.end() ? &it->second : &seen[std::move(key)];
    return row[c];
  }

  // One line of the block (trimmed, not empty).
  void line(std::string_view t, size_t no, std::string_view origin, std::vector<DcgmResult>& out,
            BlockInfo& info) {
    if (t.front() == '#') return take_header(t.substr(1));
    text::split_words(t, words);
    const std::vector<std::string_view>& f = words;
    if (f.size() < 2 || !is_digit(f[1][0]) || f[1].size() > 6) return;
    if (f[0] != "GPU") {  // a MIG instance ("GPU-I 21"), a switch, a link, a CPU: read, no GPU
      info.recognised = info.recognised || f.size() > 2;
      return;
    }
    unsigned gpu = 0;  // at most 6 digits, the first a digit (above)
    std::from_chars(f[1].data(), f[1].data() + f[1].size(), gpu);
    const bool shaped = gpu < shapes.size() && shapes[gpu];
    if (shaped) settle(gpu);
    std::vector<FieldSeen*>* row = f.size() > 2 ? row_for(gpu, info) : nullptr;
    bool moved = false;  // a largest value moved: the GPU's shapes are stale
    // "GPU 1 120": the entity takes two words, the fields follow in header order after "Entity".
    for (size_t c = 1; c < cols.size() && c + 1 < f.size(); ++c) {
      info.recognised = true;
      const std::string_view v = f[c + 1];
      if (FieldSeen* at_c = row ? slot(*row, gpu, c, info) : nullptr)
        moved = add_seen(*at_c, v, no) || moved;
      if (xider[c] && xid_cell(v)) out.push_back(dmon_xid(gpu, v, t, origin, no));
    }
    if (moved && shaped) ++shapes[gpu]->moves;
  }

  // The common row, "GPU 3  412.5  71 ...", nothing before it, at p (136 bytes readable): held
  // to the bounds of its shape where one is made, and then only counted; else read cell by cell
  // (gpu_row), and its shape made from the largest values that follow. The bytes it takes with
  // its '\n' (0: not taken, line()'s to read).
  size_t fast_row(const char* p, size_t no, std::string_view origin, std::vector<DcgmResult>& out,
                  BlockInfo& info) {
    // The text is read a row at a time, and the rows are short: the lines ahead are asked for
    // before they are needed (a fifth of the time at 256 MB).
    __builtin_prefetch(p + 2048);
    __builtin_prefetch(p + 2048 + 64);
    // The shape hinted at by the row's key first. Its id as written is part of the shape, so
    // this needs no more than to find the GPU.
    const auto digit = [](char c) { return static_cast<unsigned>(c) - unsigned{'0'}; };
    unsigned gpu = 64;  // none of the first 64
    if (p[1] == 'P' && p[2] == 'U' && p[3] == ' ' && is_digit(p[4]))
      gpu = !is_digit(p[5]) ? digit(p[4]) : !is_digit(p[6]) ? digit(p[4]) * 10 + digit(p[5]) : 64;
    const uint64_t key = row_key(p);
    if (DmonShapes* g = gpu < shapes.size() ? shapes[gpu].get() : nullptr) {
      const DmonShape* s = g->hinted(key);
      if (s != nullptr && fit(*s, p) == Fit::kWithin) return within(*g, *s, info);
    }
    return shape_row(p, key, no, origin, out, info);
  }

  size_t within(DmonShapes& g, const DmonShape& s, BlockInfo& info) {
    ++g.uncounted;
    if (s.na_fields != 0) {
      g.na_last |= s.na_fields;
      for (uint64_t m = s.na_fields; m != 0; m &= m - 1)
        ++g.na_uncounted[static_cast<size_t>(__builtin_ctzll(m))];
    }
    info.recognised = true;
    return s.nl + 1;
  }

  // fast_row for a row whose key hinted at no shape that holds it: its shape found by its words
  // (and the hint set), else the row read cell by cell and its shape made.
  size_t shape_row(const char* p, uint64_t key, size_t no, std::string_view origin,
                   std::vector<DcgmResult>& out, BlockInfo& info) {
    text::RowWords w;
    size_t nl = 0, len = 0;
    unsigned gpu = 0;
    if (!text::line_words(p, w, nl, len) || !gpu_of(p, len, w, gpu)) return 0;
    if (gpu >= shapes.size() || cols.size() < 2) {
      gpu_row(gpu, p, len, w, no, origin, out, info);
      return nl + 1;
    }
    if (!shapes[gpu]) shapes[gpu] = std::make_unique<DmonShapes>();
    DmonShapes& g = *shapes[gpu];
    DmonShape& s = g.slot(w, nl);
    g.hint(key, s);
    Fit f = Fit::kOther;
    if (g.holds(s, w, nl)) f = fit(s, p);
    if (f == Fit::kWithin) return within(g, s, info);
    settle(gpu);
    if (gpu_row(gpu, p, len, w, no, origin, out, info)) ++g.moves;
    if (f == Fit::kOther || s.made_at != g.moves) make(s, g.moves, p, nl, w, gpu);
    return nl + 1;
  }

  // `s`, the shape of the row at p, bounded by `gpu`'s largest values so far.
  void make(DmonShape& s, uint32_t moves, const char* p, size_t nl, const text::RowWords& w,
            unsigned gpu) {
    const std::vector<FieldSeen*>* row = direct[gpu];  // none when the readings are full
    bounds.clear();
    for (size_t c = 1; row != nullptr && c < cols.size(); ++c)
      bounds.push_back(bound_of((*row)[c], xider[c] != 0));
    make_shape(p, nl, w, bounds, s);  // with no fields' bounds, not usable
    s.made_at = moves;
  }

  // line() for a row "GPU <id> <cells>" of `gpu` (gpu_of) that starts at `p` (trimmed: `len`
  // bytes, its words `w`, 8 bytes readable from each one's start), without gathering its words
  // in a vector and reading the short decimal cells 8 bytes at a time. True when a largest
  // value moved.
  bool gpu_row(unsigned gpu, const char* p, size_t len, text::RowWords w, size_t no,
               std::string_view origin, std::vector<DcgmResult>& out, BlockInfo& info) {
    bool moved = false;
    size_t b = 0, e = 0;
    w.next(b, e);  // "GPU"
    w.next(b, e);  // its id
    std::vector<FieldSeen*>* row = row_for(gpu, info);
    FieldSeen* const* slots = row ? row->data() : nullptr;  // never resized
    const uint8_t* xid = xider.data();
    const size_t n = cols.size();
    info.recognised = info.recognised || n > 1;
    for (size_t c = 1; c < n && w.next(b, e); ++c) {
      const std::string_view v(p + b, e - b);
      FieldSeen* at_c = slots ? slots[c] : nullptr;
      if (at_c == nullptr && row) at_c = new_slot(*row, gpu, c, info);
      if (at_c) {
        ShortDecimal d;
        if (short_decimal(p + b, e - b, d))
          moved = add_short(*at_c, d, v, no) || moved;
        else
          moved = add_seen(*at_c, v, no) || moved;
      }
      if (xid[c] && xid_cell(v))
        out.push_back(dmon_xid(gpu, v, std::string_view(p, len), origin, no));
    }
    return moved;
  }

  // The GPU of a row "GPU <id> <cells>" (words w): false for any other row, and for one with
  // no cell, which line() reads.
  static bool gpu_of(const char* p, size_t len, text::RowWords w, unsigned& gpu) {
    if (len < 5 || p[0] != 'G' || p[1] != 'P' || p[2] != 'U' || (p[3] != ' ' && p[3] != '\t'))
      return false;
    size_t b = 0, e = 0, id_b = 0, id_e = 0;
    w.next(b, e);  // "GPU"
    if (!w.next(id_b, id_e) || !is_digit(p[id_b]) || id_e - id_b > 6 || w.empty()) return false;
    gpu = 0;  // its leading digits, as from_chars reads them
    for (size_t k = id_b; k < id_e && is_digit(p[k]); ++k)
      gpu = gpu * 10 + static_cast<unsigned>(p[k] - '0');
    return true;
  }

  FieldSeen* full(BlockInfo& info) {
    if (!std::exchange(said_full, true))
      info.cut = "dcgmi dmon of more than " + std::to_string(kMaxDmonReadings) +
                 " (GPU, field) readings: the values of further ones not read";
    return nullptr;
  }
};

DmonReadings::DmonReadings() : s_(std::make_unique<State>()) {}
DmonReadings::~DmonReadings() = default;
DmonReadings::DmonReadings(DmonReadings&&) noexcept = default;
DmonReadings& DmonReadings::operator=(DmonReadings&&) noexcept = default;

BlockInfo DmonReadings::read(std::string_view piece, std::string_view origin, size_t first_line,
                             std::vector<DcgmResult>& out) {
  BlockInfo info;
  if (s_->first_line == 0) s_->first_line = first_line;
  text::LineReader rd(piece);
  std::string_view line;
  size_t no = first_line - 1;
  while (rd.next(line)) {
    ++no;
    const auto t = text::trim(line);
    if (!t.empty()) s_->line(t, no, origin, out, info);
  }
  return info;
}

BlockInfo DmonReadings::read_from(std::string_view text, size_t begin, size_t first_line,
                                  const text::BlockLimits& limits, std::string_view origin,
                                  std::vector<DcgmResult>& out, text::BlockStop& stop) {
  BlockInfo info;
  if (s_->first_line == 0) s_->first_line = first_line;
  // The common row, "GPU 3  412.5  71 ...", nothing before it (fast_row): held to its shape's
  // bounds, or its words and its end found in one pass over 128 bytes, as many as it may have,
  // and a cell's 8 bytes read from the last one's start (so 136 left in the text).
  const auto fast = [&](const char* p, size_t left, size_t no) -> size_t {
    return *p == 'G' && left >= 136 ? s_->fast_row(p, no, origin, out, info) : 0;
  };
  text::walk_block(
      text, begin, first_line, limits, fast,
      [](std::string_view t) { return block_fits(Block::kDmon, t); },
      [&](std::string_view t, size_t no) { s_->line(t, no, origin, out, info); }, stop);
  return info;
}

void DmonReadings::finish(std::string_view origin, std::vector<DcgmResult>& out) {
  s_->forget_rows();
  emit_readings(s_->seen, origin, s_->first_line, out);
  s_->seen.clear();
}

namespace {

BlockInfo read_dmon(std::string_view block, std::string_view origin, size_t first_line,
                    std::vector<DcgmResult>& out) {
  DmonReadings r;
  const BlockInfo info = r.read(block, origin, first_line, out);
  r.finish(origin, out);
  return info;
}

// ---- nvlink -e ----

// Every "link, counter, value" of the box: rows "|Link 0 | CRC FLIT Error | 0 |" or a "| Link 0 |"
// row followed by "| -> CRC FLIT Error | 0 |" rows; the GPU from "GPU 0" / "GPU ID: 0".
BlockInfo read_nvlink_errors(std::string_view block, std::string_view origin, size_t first_line,
                             std::vector<DcgmResult>& out) {
  BlockInfo info;
  text::LineReader rd(block);
  std::string_view line;
  size_t no = first_line - 1;
  std::optional<unsigned> gpu;
  std::string link;
  bool closed = false;
  while (rd.next(line)) {
    ++no;
    const auto t = text::trim(line);
    if (t.empty()) continue;
    if (t.front() == '+') {
      closed = info.recognised;
      continue;
    }
    closed = false;
    std::vector<std::string_view> cells;
    for (size_t i = 1; i < t.size();) {
      const size_t bar = t.find('|', i);
      cells.push_back(text::trim(t.substr(i, bar == std::string_view::npos ? bar : bar - i)));
      if (bar == std::string_view::npos) break;
      i = bar + 1;
    }
    while (!cells.empty() && cells.back().empty()) cells.pop_back();
    if (cells.empty()) continue;
    if (text::starts_with(cells[0], "GPU")) {  // "GPU 0", "GPU ID: 0"
      const auto ns = numbers(cells[0]);
      gpu = ns.empty() ? std::nullopt : std::optional<unsigned>(ns.front());
      continue;
    }
    if (text::starts_with(cells[0], "Link ")) link = std::string(cells[0]);
    std::string_view name, value;
    if (cells.size() == 3 && text::starts_with(cells[0], "Link ")) {
      name = cells[1];
      value = cells[2];
    } else if (cells.size() == 2 && text::starts_with(cells[0], "->")) {
      name = text::trim(cells[0].substr(2));
      value = cells[1];
    }
    if (name.empty() || !gpu || link.empty()) continue;
    info.recognised = true;
    DcgmResult r;
    r.kind = DcgmKind::kReading;
    r.gpu = gpu;
    r.part = "dcgmi nvlink -e";
    r.test = link + " " + std::string(name);
    r.text = std::string(value);
    r.count = na(value) ? 0 : 1;
    r.of = 1;
    r.origin = at(origin, no);
    r.block = at(origin, first_line);
    out.push_back(std::move(r));
  }
  if (info.recognised && !closed) info.cut = "dcgmi nvlink error counts cut before their end";
  return info;
}

// ---- discovery -l ----

// "| 0      | Name: NVIDIA H100 80GB HBM3   |": the entity id on its first row, then "Key: value"
// rows. Only GPU tables give readings; a switch or CPU table is read and left.
BlockInfo read_discovery(std::string_view block, std::string_view origin, size_t first_line,
                         std::vector<DcgmResult>& out) {
  BlockInfo info;
  text::LineReader rd(block);
  std::string_view line;
  size_t no = first_line - 1;
  bool gpus = false, closed = false;
  std::optional<unsigned> id;
  while (rd.next(line)) {
    ++no;
    const auto t = text::trim(line);
    if (t.empty()) continue;
    std::string_view left, right;
    if (t.front() == '+') {
      closed = info.recognised;
      continue;
    }
    closed = false;
    if (!two_cells(t, left, right)) continue;
    if (text::ends_with(left, " ID") && right.empty()) {  // "| Switch ID |": ids only
      gpus = false;
      info.recognised = true;
      continue;
    }
    if (right == "Device Information") {
      gpus = left == "GPU ID";
      continue;
    }
    if (!left.empty()) {
      const auto ns = numbers(left);
      id = ns.empty() ? std::nullopt : std::optional<unsigned>(ns.front());
    }
    const size_t colon = right.find(": ");
    if (!id || colon == std::string_view::npos) continue;
    info.recognised = true;
    if (!gpus) continue;
    DcgmResult r;
    r.kind = DcgmKind::kReading;
    r.gpu = id;
    r.part = "dcgmi discovery";
    r.test = std::string(right.substr(0, colon));
    r.text = std::string(text::trim(right.substr(colon + 2)));
    r.origin = at(origin, no);
    r.block = at(origin, first_line);
    out.push_back(std::move(r));
  }
  if (info.recognised && !closed) info.cut = "dcgmi discovery table cut before its end";
  return info;
}

// ---- stats (job and pid reports) ----

// "+-----  Event Stats  ----+----+" or "|-----  Execution Stats  ---+---|" -> "Event Stats".
std::optional<std::string> stats_section(std::string_view t) {
  if (t.size() < 8 || t.substr(1, 2) != "--") return std::nullopt;
  const size_t w = t.find_first_not_of('-', 1);
  if (w == std::string_view::npos || t[w] == '+' || t[w] == '|') return std::nullopt;
  const auto rest = text::trim(t.substr(w));
  const auto name = text::trim(rest.substr(0, rest.find("  ")));
  if (name.empty()) return std::nullopt;
  return std::string(name);
}

// A row's name as one field: "Due to - Power (%)" and "       - Thermal (%)" are the slowdown
// shares, '*' marks a process statistic.
std::string stats_field(std::string_view name, std::string_view section) {
  while (!name.empty() && (name.back() == '*' || name.back() == ' ')) name.remove_suffix(1);
  if (section == "Slowdown Stats") {
    if (text::starts_with(name, "Due to")) name = text::trim(name.substr(6));
    if (text::starts_with(name, "-")) name = text::trim(name.substr(1));
    return "Slowdown " + std::string(name);
  }
  return std::string(name);
}

class StatsTable {
 public:
  StatsTable(std::string_view origin, size_t first_line, std::vector<DcgmResult>& out)
      : origin_(origin), first_line_(first_line), out_(out) {}
  void row(std::string_view t, size_t no);
  BlockInfo finish() const;

 private:
  void reading(std::string field, std::string_view value, size_t no);
  std::string_view origin_;
  size_t first_line_;
  std::vector<DcgmResult>& out_;
  std::optional<unsigned> gpu_;
  std::string section_, field_;
  std::optional<size_t> health_;  // the Overall Health result its incident rows add to
  bool seen_ = false, closed_ = false;
};

void StatsTable::reading(std::string field, std::string_view value, size_t no) {
  DcgmResult r;
  r.kind = DcgmKind::kReading;
  r.gpu = gpu_;
  r.part = "dcgmi stats";
  r.test = std::move(field);
  r.text = std::string(value);
  r.origin = at(origin_, no);
  r.block = at(origin_, first_line_);
  out_.push_back(std::move(r));
}

void StatsTable::row(std::string_view t, size_t no) {
  if (t.empty()) return;
  if (auto s = stats_section(t)) {
    section_ = *s;
    health_.reset();
    closed_ = false;
    return;
  }
  if (t.front() == '+') {
    closed_ = seen_ && t.find('=') == std::string_view::npos;
    return;
  }
  closed_ = false;
  std::string_view left, right;
  if (!two_cells(t, left, right)) return;
  if (right.empty() && (left == "Summary" || text::starts_with(left, "GPU ID:"))) {
    const auto ns = numbers(left);
    gpu_ = ns.empty() ? std::nullopt : std::optional<unsigned>(ns.front());
    return;
  }
  if (left.empty() && health_) {  // an incident's text under Overall Health
    std::string& text = out_[*health_].text;
    text += (text.empty() ? "" : " ") + std::string(right);
    return;
  }
  if (left.empty() || right.empty()) return;
  seen_ = true;
  if (left == "Overall Health") {
    DcgmResult r;
    r.kind = right == "Healthy" ? DcgmKind::kHealthy : DcgmKind::kHealth;
    r.gpu = gpu_;
    r.part = "dcgmi stats";
    r.level = std::string(right);
    r.text = right == "Healthy" ? "Overall Health: Healthy" : "";
    r.origin = at(origin_, no);
    health_ = out_.size();
    out_.push_back(std::move(r));
    return;
  }
  reading(stats_field(left, section_), right, no);
}

BlockInfo StatsTable::finish() const {
  BlockInfo info;
  info.recognised = seen_;
  if (seen_ && !closed_) info.cut = "dcgmi stats report cut before its end";
  return info;
}

BlockInfo read_stats(std::string_view block, std::string_view origin, size_t first_line,
                     std::vector<DcgmResult>& out) {
  StatsTable table(origin, first_line, out);
  text::LineReader rd(block);
  std::string_view line;
  size_t no = first_line - 1;
  while (rd.next(line)) table.row(text::trim(line), ++no);
  return table.finish();
}

// ---- health -c -j ----

BlockInfo read_json(std::string_view block, std::string_view origin, size_t first_line,
                    std::vector<DcgmResult>& out) {
  BlockInfo info;
  const auto j = nlohmann::json::parse(block, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("body")) return info;
  const auto& body = j["body"];
  if (!body.is_object() || !body.contains("Overall Health")) return info;
  info.recognised = true;
  const auto& overall = body["Overall Health"];
  const std::string value =
      overall.is_object() && overall.contains("value") && overall["value"].is_string()
          ? overall["value"].get<std::string>()
          : "";
  DcgmResult r;
  r.kind = value == "Healthy" ? DcgmKind::kHealthy : DcgmKind::kHealth;
  r.part = "dcgmi health";
  r.level = value;
  r.text = "Overall Health: " + value;
  r.origin = at(origin, first_line);
  out.push_back(std::move(r));
  return info;
}

// ---- health -c (text) ----

// The two cells of "| -> 0                      | Failure        |" (trimmed); false when the
// row has not two.
bool two_cells(std::string_view t, std::string_view& left, std::string_view& right) {
  if (t.size() < 3 || t.front() != '|') return false;
  const size_t mid = t.find('|', 1);
  if (mid == std::string_view::npos) return false;
  const size_t end = t.find('|', mid + 1);
  left = text::trim(t.substr(1, mid - 1));
  right = text::trim(t.substr(mid + 1, end == std::string_view::npos ? end : end - mid - 1));
  return true;
}

// dcgmi health -c: "Overall Health | Failure", then per entity "-> 0 | Failure" (the GPU id),
// per system "-> NVLINK system | Failure" and its incident text on rows with an empty left cell.
class HealthTable {
 public:
  HealthTable(std::string_view origin, std::vector<DcgmResult>& out) : origin_(origin), out_(out) {}
  void row(std::string_view t, size_t no);
  BlockInfo finish(size_t first_line);

 private:
  std::string_view origin_;
  std::vector<DcgmResult>& out_;
  std::optional<std::string> overall_;
  std::optional<unsigned> gpu_;
  size_t first_ = 0;           // out_ size before the table
  std::optional<size_t> cur_;  // the incident being read
  bool started_ = false;
};

void HealthTable::row(std::string_view t, size_t no) {
  std::string_view left, right;
  if (!started_) {
    first_ = out_.size();
    started_ = true;
  }
  if (!two_cells(t, left, right)) return;
  if (left == "Overall Health") {
    overall_ = std::string(right);
    return;
  }
  if (text::starts_with(left, "->")) {
    const std::string_view what = text::trim(left.substr(2));
    cur_.reset();
    if (text::ends_with(what, " system")) {
      DcgmResult r;
      r.kind = DcgmKind::kHealth;
      r.gpu = gpu_;
      r.part = "dcgmi health";
      r.test = std::string(what.substr(0, what.size() - 7));
      r.level = std::string(right);
      r.origin = at(origin_, no);
      cur_ = out_.size();
      out_.push_back(std::move(r));
    } else {
      const auto ns = numbers(what);  // "-> 0", "-> GPU 0"
      gpu_ = ns.empty() ? std::nullopt : std::optional<unsigned>(ns.front());
    }
    return;
  }
  if (left.empty() && cur_ && !right.empty()) {
    std::string& text = out_[*cur_].text;
    text += (text.empty() ? "" : " ") + std::string(right);
  }
}

BlockInfo HealthTable::finish(size_t first_line) {
  BlockInfo info;
  if (!overall_) return info;
  info.recognised = true;
  if (out_.size() > first_) return info;  // the incidents say it
  DcgmResult r;
  r.kind = *overall_ == "Healthy" ? DcgmKind::kHealthy : DcgmKind::kHealth;
  r.part = "dcgmi health";
  r.level = *overall_;
  r.text = "Overall Health: " + *overall_;
  r.origin = at(origin_, first_line);
  out_.push_back(std::move(r));
  return info;
}

BlockInfo read_health_table(std::string_view block, std::string_view origin, size_t first_line,
                            std::vector<DcgmResult>& out) {
  HealthTable table(origin, out);
  text::LineReader rd(block);
  std::string_view line;
  size_t no = first_line - 1;
  while (rd.next(line)) table.row(text::trim(line), ++no);
  return table.finish(first_line);
}

bool names_health_table(std::string_view t) {
  return t.find("Health Monitor Report") != std::string_view::npos ||
         t.find("| Overall Health ") != std::string_view::npos;
}

// The header row of `dcgmi discovery -l`'s table: "| GPU ID | Device Information |".
bool names_discovery(std::string_view t) {
  if (t.empty() || t.front() != '|') return false;
  if (t == "| Switch ID |" || t == "| CPU ID |") return true;  // the entity tables after GPUs
  return t.find("Device Information") != std::string_view::npos &&
         t.find(" ID ") != std::string_view::npos;
}

// `dcgmi nvlink -e`: "| NVLINK Error Counts |" (DCGM 3/4, then "| GPU 0 |") or "| GPU ID: 0 |
// NVLINK Error Counts |" (the user guide's layout).
bool names_nvlink_errors(std::string_view t) {
  return !t.empty() && t.front() == '|' && t.find("NVLINK Error Counts") != std::string_view::npos;
}

// The first rows of a `dcgmi stats` report: its title ("Summary", "GPU ID: 0") or a section.
bool names_stats(std::string_view t) {
  return text::starts_with(t, "| Summary ") || text::starts_with(t, "| GPU ID: ") ||
         t.find("-----  Execution Stats  ") != std::string_view::npos;
}

// The title row of a box that is always another block's start ("|  NvLink Link Status  |").
// Stats titles ("| GPU ID: 0 |") are left out: health tables carry the same rows.
Block box_title(std::string_view t) {
  if (t.find("NvLink Link Status") != std::string_view::npos) return Block::kNvlinkGrid;
  if (t.find("Health Monitor Report") != std::string_view::npos) return Block::kHealthTable;
  if (names_discovery(t)) return Block::kDiscovery;
  if (names_nvlink_errors(t)) return Block::kNvlinkErrors;
  return Block::kNone;
}

}  // namespace

Block block_start(std::string_view t, std::string_view next) {
  if (t.empty()) return Block::kNone;
  switch (t.front()) {
    case '|':
    case '+':
      if (t.find("NvLink Link Status") != std::string_view::npos ||
          next.find("NvLink Link Status") != std::string_view::npos)
        return Block::kNvlinkGrid;
      if (names_health_table(t) || names_health_table(next)) return Block::kHealthTable;
      if (names_discovery(t) || names_discovery(next)) return Block::kDiscovery;
      if (names_nvlink_errors(t) || names_nvlink_errors(next)) return Block::kNvlinkErrors;
      if (names_stats(t) || names_stats(next)) return Block::kStats;
      return diag_row(t) ? Block::kDiagTable : Block::kNone;
    case '#':
      return text::starts_with(t, "#Entity") ? Block::kDmon : Block::kNone;
    case '{':
      return t == "{" || text::starts_with(t, "{\"DCGM") ? Block::kJson : Block::kNone;
    default:
      return Block::kNone;
  }
}

bool block_fits(Block b, std::string_view t) {
  if (t.empty()) return false;
  switch (b) {
    case Block::kDiagTable:
    case Block::kHealthTable:
    case Block::kDiscovery:
    case Block::kStats:
    case Block::kNvlinkErrors: {
      if (t.front() == '+') return true;
      if (t.front() != '|') return false;
      // A box cut before its bottom border runs into the next box: that box's title row
      // starts a block of its own.
      const Block other = box_title(t);
      return other == Block::kNone || other == b;
    }
    case Block::kNvlinkGrid:
      return t.front() == '|' || t.front() == '+' || text::starts_with(t, "GPUs:") ||
             text::starts_with(t, "gpuId ") || text::starts_with(t, "NvSwitches") ||
             text::starts_with(t, "No NvSwitches") || text::starts_with(t, "physicalId ") ||
             text::starts_with(t, "Key:") || t.find_first_not_of("UDX_ ") == std::string_view::npos;
    case Block::kDmon:
      // "ID" alone, or with the fields' units as DCGM 4 prints them ("ID   W   mJ   C").
      return t.front() == '#' || text::starts_with(t, "GPU") ||
             (text::starts_with(t, "ID") && (t.size() == 2 || text::is_space(t[2]))) ||
             text::starts_with(t, "Switch ") || text::starts_with(t, "CPU") ||
             text::starts_with(t, "Link ");
    case Block::kJson:
      return true;  // bounded by the caller at the closing brace
    default:
      return false;
  }
}

BlockInfo read_block(Block b, std::string_view block, std::string_view origin, size_t first_line,
                     std::vector<DcgmResult>& out) {
  switch (b) {
    case Block::kDiagTable: {
      DiagTable table(origin, first_line);
      text::LineReader rd(block);
      std::string_view line;
      while (rd.next(line)) table.row(text::trim(line));
      return table.finish(out);
    }
    case Block::kNvlinkGrid:
      return read_grid(block, origin, first_line, out);
    case Block::kDmon:
      return read_dmon(block, origin, first_line, out);
    case Block::kJson: {
      const BlockInfo health = read_json(block, origin, first_line, out);
      return health.recognised ? health : read_diag_json(block, origin, first_line, out);
    }
    case Block::kHealthTable:
      return read_health_table(block, origin, first_line, out);
    case Block::kDiscovery:
      return read_discovery(block, origin, first_line, out);
    case Block::kStats:
      return read_stats(block, origin, first_line, out);
    case Block::kNvlinkErrors:
      return read_nvlink_errors(block, origin, first_line, out);
    default:
      return {};
  }
}

namespace {

// "4 GPUs found.", "8 GPUs found (Active).", "0 NvSwitches found." (dcgmi discovery), "dcgm
// version: 4.4.1": a reading without a GPU.
bool take_count_or_version(std::string_view t, std::string_view origin, size_t line_no,
                           std::vector<DcgmResult>& out) {
  DcgmResult r;
  r.kind = DcgmKind::kReading;
  r.origin = at(origin, line_no);
  if (t.size() > 14 && text::iequals(t.substr(0, 13), "dcgm version:")) {
    r.part = "DCGM";
    r.test = "version";
    r.text = std::string(text::trim(t.substr(13)));
  } else {
    size_t used = 0;
    const auto n = text::leading_digits(t, used);
    if (used == 0) return false;
    const auto rest = t.substr(used);
    for (std::string_view what : {" GPUs found", " GPU found", " NvSwitches found"}) {
      if (!text::starts_with(rest, what)) continue;
      const auto tail = text::trim(rest.substr(what.size()));
      if (!tail.empty() && tail != "." && !text::starts_with(tail, "(")) return false;
      r.part = "dcgmi discovery";
      r.test = what.find("GPU") != std::string_view::npos ? "GPUs found" : "NvSwitches found";
      r.text = std::to_string(n) + (text::starts_with(tail, "(") ? " " + std::string(tail) : "");
      if (!r.text.empty() && r.text.back() == '.') r.text.pop_back();
    }
    if (r.part.empty()) return false;
  }
  out.push_back(std::move(r));
  return true;
}

// dcgm-exporter's series as scraped from its /metrics ("DCGM_FI_DEV_GPU_TEMP{gpu="0",...} 45"),
// and their "# HELP" / "# TYPE" lines. A field the table knows is named by its dmon tag, so the
// same rules judge both; an Xid other than 0 is an Xid reading as dmon's is.
// One value of a field named as the exporter names it ("DCGM_FI_DEV_XID_ERRORS"), kept under
// its dmon tag when the field is known.
DcgmResult named_reading(std::string_view part, std::string_view name, std::optional<unsigned> gpu,
                         std::string_view value, std::string_view origin, size_t line_no) {
  const DcgmFieldInfo* f = dcgm_field_by_exporter_name(name);
  DcgmResult r;
  r.kind = DcgmKind::kReading;
  r.gpu = gpu;
  r.part = std::string(part);
  r.test = f ? std::string(f->tag) : std::string(name);
  r.text = std::string(value);
  r.count = 1;
  r.of = 1;
  r.origin = at(origin, line_no);
  r.block = std::string(origin);
  return r;
}

bool take_exporter_line(std::string_view t, std::string_view origin, size_t line_no,
                        std::vector<DcgmResult>& out) {
  if (text::starts_with(t, "# HELP DCGM_") || text::starts_with(t, "# TYPE DCGM_")) return true;
  if (!text::starts_with(t, "DCGM_FI_")) return false;
  const size_t name_end = t.find_first_of("{ ");
  if (name_end == std::string_view::npos) return false;
  const std::string_view name = t.substr(0, name_end);
  std::string_view rest = t.substr(name_end);
  std::optional<unsigned> gpu;
  if (rest.front() == '{') {
    const size_t close = rest.find('}');
    if (close == std::string_view::npos) return false;
    const auto labels = rest.substr(0, close);
    const size_t g = labels.find("gpu=\"");
    if (g != std::string_view::npos && g + 5 < labels.size() && is_digit(labels[g + 5])) {
      size_t used = 0;
      gpu = static_cast<unsigned>(text::leading_digits(labels.substr(g + 5), used));
    }
    rest = rest.substr(close + 1);
  }
  std::vector<std::string_view> words;
  text::split_words(rest, words);
  if (words.empty() || !number(words[0])) return false;
  const DcgmFieldInfo* f = dcgm_field_by_exporter_name(name);
  DcgmResult r = named_reading("dcgm-exporter", name, gpu, words[0], origin, line_no);
  if (f && f->cls == DcgmFieldClass::kXid && gpu && words[0] != "0") {
    DcgmResult x = r;
    x.kind = DcgmKind::kXid;
    x.test = "XIDER";
    x.count = static_cast<unsigned>(*number(words[0]));
    x.text = std::string(t);
    out.push_back(std::move(x));
  }
  out.push_back(std::move(r));
  return true;
}

}  // namespace

namespace {

// A DCGM failure code with its GPU, as monitors built on DCGM print it ("ErrorCode:
// DCGM_FR_IMEX_UNHEALTHY GPU:0 PCI:0000:9d:00.0"), and the detail line that follows it
// ("GPU_UUID:GPU-... IMEX daemon status is -3 (not READY)"): a health incident.
bool take_failure_code(std::string_view t, std::string_view origin, size_t line_no,
                       std::vector<DcgmResult>& out) {
  if (text::starts_with(t, "GPU_UUID:GPU-")) {
    if (out.empty() || out.back().kind != DcgmKind::kHealth || out.back().part != "DCGM error code")
      return false;
    const size_t sp = t.find(' ');
    if (sp != std::string_view::npos)
      out.back().text += ": " + std::string(text::trim(t.substr(sp)));
    return true;
  }
  // A GPU health watch's verdict ("GpuNvlinkWatch = True   reason=GpuNvlinkWatchIsNotHealthy",
  // NVSentinel on DCGM): an incident of that watch when it says so, nothing wrong otherwise.
  if (const size_t eq = t.find("Watch = "); text::starts_with(t, "Gpu") &&
                                            eq != std::string_view::npos &&
                                            t.find(" reason=") != std::string_view::npos) {
    if (t.find("IsNotHealthy") == std::string_view::npos) return true;
    DcgmResult r;
    r.kind = DcgmKind::kHealth;
    r.part = "GPU health watch";
    r.level = "Warning";
    r.test = std::string(t.substr(0, eq + 5));
    r.text = std::string(t);
    r.origin = at(origin, line_no);
    out.push_back(std::move(r));
    return true;
  }
  if (!text::starts_with(t, "ErrorCode:DCGM_FR_")) return false;
  DcgmResult r;
  r.kind = DcgmKind::kHealth;
  r.part = "DCGM error code";
  r.level = "Warning";
  const std::string_view code = t.substr(10, t.find(' ') - std::min(t.find(' '), size_t{10}));
  r.test = std::string(code);
  const size_t g = t.find(" GPU:");
  if (g != std::string_view::npos && g + 5 < t.size() && is_digit(t[g + 5])) {
    size_t used = 0;
    r.gpu = static_cast<unsigned>(text::leading_digits(t.substr(g + 5), used));
  }
  r.text = std::string(t);
  r.origin = at(origin, line_no);
  out.push_back(std::move(r));
  return true;
}

// A diagnostic's result as one JSON record of a structured log, as health agents built on DCGM
// print them, after a container or logger name: 'preflight-dcgm-diag {"event": "Test fail",
// "test": "pcie", "error_code": 101, "detail": "Detected XID 45 for GPU 0 ...", "gpu": "GPU-..."}'.
// A failed or warned test is a diag result; the agent's "Loaded N DCGM error mappings" record is
// routine. Other records are left to the other readers.
bool take_json_record(std::string_view t, std::string_view origin, size_t line_no,
                      std::vector<DcgmResult>& out) {
  const size_t brace = t.find("{\"");
  if (brace == std::string_view::npos) return false;
  const auto j = nlohmann::json::parse(t.substr(brace), nullptr, false);
  if (!j.is_object()) return false;
  const auto str = [&](const char* key) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string event = text::ascii_lower(str("event"));
  if (text::starts_with(event, "loaded ") && event.find("dcgm error mappings") != std::string::npos)
    return true;
  const std::string test = str("test");
  const bool fail = event == "test fail" || event == "test failed";
  const bool warn = event == "test warn" || event == "test warning";
  if (test.empty() || (!fail && !warn)) return false;
  DcgmResult r;
  r.kind = fail ? DcgmKind::kDiagFail : DcgmKind::kDiagWarn;
  r.part = "DCGM diagnostic (structured log)";
  r.test = test;
  r.text = str("detail");
  if (const auto code = j.find("error_code"); code != j.end() && code->is_number_integer())
    r.text += (r.text.empty() ? "" : " ") + ("(DCGM error code " + code->dump() + ")");
  if (const auto g = j.find("gpu"); g != j.end() && g->is_number_unsigned())
    r.gpu = g->get<unsigned>();
  else if (const size_t p = r.text.find("for GPU "); p != std::string::npos)
    if (size_t used = 0; p + 8 < r.text.size() && is_digit(r.text[p + 8])) {
      const uint64_t id = text::leading_digits(std::string_view(r.text).substr(p + 8), used);
      if (id < 4096) r.gpu = static_cast<unsigned>(id);
    }
  r.origin = at(origin, line_no);
  out.push_back(std::move(r));
  return true;
}

// A row of a pasted table of DCGM fields and values, "| `DCGM_FI_DEV_ECC_SBE_VOL_TOTAL` |
// 9.6e9, rising |": one field name in the first cell, a number first in the second (thousands
// separated by commas, "54,731,746,511", or in e-notation). A row naming two fields or no number
// is left unread.
bool take_field_row(std::string_view t, std::string_view origin, size_t line_no,
                    std::vector<DcgmResult>& out) {
  if (t.size() < 12 || t.front() != '|' || t.find("DCGM_FI_") == std::string_view::npos)
    return false;
  std::vector<std::string_view> cells;
  for (size_t p = 1; p < t.size();) {
    const size_t bar = t.find('|', p);
    const size_t e = bar == std::string_view::npos ? t.size() : bar;
    std::string_view cell = text::trim(t.substr(p, e - p));
    while (!cell.empty() && (cell.front() == '`' || cell.front() == '*')) cell.remove_prefix(1);
    while (!cell.empty() && (cell.back() == '`' || cell.back() == '*')) cell.remove_suffix(1);
    cells.push_back(cell);
    p = e + 1;
  }
  while (!cells.empty() && cells.back().empty()) cells.pop_back();
  if (cells.size() != 2 || !text::starts_with(cells[0], "DCGM_FI_") ||
      cells[0].find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != std::string_view::npos)
    return false;
  // The leading number, its thousands separators dropped.
  std::string value;
  const std::string_view v = cells[1];
  for (size_t i = 0; i < v.size(); ++i) {
    const char c = v[i];
    if (is_digit(c) || c == '.' || ((c == 'e' || c == 'E') && !value.empty()) ||
        ((c == '+' || c == '-') && !value.empty() && (value.back() == 'e' || value.back() == 'E')))
      value += c;
    else if (c == ',' && !value.empty() && i + 3 < v.size() && is_digit(v[i + 1]) &&
             is_digit(v[i + 2]) && is_digit(v[i + 3]) && (i + 4 == v.size() || !is_digit(v[i + 4])))
      continue;
    else
      break;
  }
  if (value.empty() || !number(value)) return false;
  out.push_back(named_reading(kDcgmFieldTablePart, cells[0], std::nullopt, value, origin, line_no));
  return true;
}

}  // namespace

bool take_line(std::string_view t, std::string_view origin, size_t line_no,
               std::vector<DcgmResult>& out) {
  if (!t.empty() && t.front() == '|' && take_field_row(t, origin, line_no, out)) return true;
  if (!t.empty() && t.back() == '}' && take_json_record(t, origin, line_no, out)) return true;
  if (!t.empty() && (t.front() == 'E' || t.front() == 'G') &&
      take_failure_code(t, origin, line_no, out))
    return true;
  if (!t.empty() && (t.front() == 'D' || t.front() == '#') &&
      take_exporter_line(t, origin, line_no, out))
    return true;
  if (!t.empty() && (is_digit(t.front()) || t.front() == 'd' || t.front() == 'D') &&
      take_count_or_version(t, origin, line_no, out))
    return true;
  // dcgmi stats' confirmations and its report's footnote (DCGM's dcgmi/ProcessStats.cpp).
  if (text::starts_with(t, "Successfully retrieved statistics for job") ||
      text::starts_with(t, "Successfully retrieved process info for PID") ||
      text::starts_with(t, "Successfully started recording stats for") ||
      text::starts_with(t, "Successfully stopped recording stats for") ||
      text::starts_with(t, "Successfully removed job") || t == "Successfully removed all jobs." ||
      t == "Successfully started process watches." ||
      text::starts_with(t, "(*) Represents a process statistic.") ||
      t == "process lifetime listed." || t == "Successfully ran diagnostic for group." ||
      t == "Health monitor systems set successfully." || text::starts_with(t, "dcgmi ") ||
      text::starts_with(t, "sudo dcgmi "))
    return true;
  const size_t h = t.find("[[Health]] Detected a ");
  if (h == std::string_view::npos) return false;
  // "... Detected a WARNING in health system Thermal: 'Detected clocks event ... in GPU 2. ..."
  auto rest = t.substr(h + 22);
  DcgmResult r;
  r.kind = DcgmKind::kHealth;
  r.part = "DCGM host engine";
  r.level = std::string(rest.substr(0, rest.find(' ')));
  const size_t sys = rest.find("health system ");
  if (sys != std::string_view::npos) {
    const auto s = rest.substr(sys + 14);
    r.test = std::string(s.substr(0, s.find(':')));
  }
  const size_t g = rest.find("GPU ");
  if (g != std::string_view::npos && g + 4 < rest.size() && is_digit(rest[g + 4])) {
    size_t used = 0;
    r.gpu = static_cast<unsigned>(text::leading_digits(rest.substr(g + 4), used));
  }
  const size_t q = rest.find('\'');
  r.text = std::string(q == std::string_view::npos ? rest : rest.substr(q + 1));
  r.origin = at(origin, line_no);
  out.push_back(std::move(r));
  return true;
}

}  // namespace gw::dcgm
