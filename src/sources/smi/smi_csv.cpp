// nvidia-smi --query-gpu=... --format=csv[,noheader-less][,nounits]. The header names the
// columns; each row is one GPU at one moment. Rows are grouped into Snapshots: a new group
// starts when a GPU repeats or the timestamp moves on by more than kGroupWindowMs.
// Hot path for big -l logs (docs/perf/parse.md): no allocation per row, commas found 16
// bytes at a time, each value parsed straight from its field by the op chosen at header
// time (smi_csv_plan.h), and only the slots the header names are rewritten per row.
// The reference path (CsvPath::kReference) is the plain version the fast one must match.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/cpu_features.h"
#include "core/event.h"
#include "sources/smi/csv_fields.h"
#include "sources/smi/model_util.h"
#include "sources/smi/smi_csv.h"
#include "sources/smi/smi_csv_fast.h"
#include "sources/smi/smi_csv_plan.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

using smi::CsvPath;
using smi::FastOp;

constexpr int64_t kGroupWindowMs = 500;  // rows of one -l cycle are a few ms apart
constexpr size_t kMaxRowErrors = 50;     // then one summary error
constexpr size_t kMaxPastedGpus = 64;    // rows_are_gpus_: at most this many in one moment
constexpr size_t kPrefetchAhead = 4096;  // as the kernel-log walk (capture_reader.cpp)

// "2026/07/14 08:12:53" (also '-' separated; v trimmed, >= 19 chars) -> epoch ms, UTC.
std::optional<int64_t> parse_ts_seconds(std::string_view v) {
  auto num = [&](size_t pos, size_t len) -> int64_t {
    int64_t out = 0;
    for (size_t i = pos; i < pos + len; ++i) {
      const char c = v[i];
      if (c < '0' || c > '9') return -1;
      out = out * 10 + (c - '0');
    }
    return out;
  };
  const int64_t y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
                s = num(17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || mi < 0 || s < 0)
    return std::nullopt;
  const int64_t days =
      text::days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return ((days * 24 + h) * 60 + mi) * 60000 + s * 1000;
}

// The ".353" part of a trimmed timestamp; 0 when absent or not three digits.
int64_t parse_ts_millis(std::string_view v) {
  if (v.size() < 23 || v[19] != '.') return 0;
  int64_t ms = 0;
  for (size_t i = 20; i < 23; ++i) {
    if (v[i] < '0' || v[i] > '9') return 0;
    ms = ms * 10 + (v[i] - '0');
  }
  return ms;
}

// "2026/07/14 08:12:53.353" -> epoch ms, read as UTC.
std::optional<int64_t> parse_csv_timestamp(std::string_view v) {
  v = text::trim(v);
  if (v.size() < 19) return std::nullopt;
  auto s = parse_ts_seconds(v);
  if (!s) return std::nullopt;
  return *s + parse_ts_millis(v);
}

// Splits one row on ',' into `out` (views into the row).
void split_row(std::string_view row, std::vector<std::string_view>& out) {
  out.clear();
  const char* p = row.data();
  const char* end = p + row.size();
  while (true) {
    const void* c = std::memchr(p, ',', static_cast<size_t>(end - p));
    const char* stop = c ? static_cast<const char*>(c) : end;
    out.emplace_back(p, static_cast<size_t>(stop - p));
    if (!c) break;
    p = stop + 1;
  }
}

// Records the offsets of the commas of `row` in ends[0..cap) (ends[k] = end of field k) and
// returns the number of fields (may exceed cap + 1: a bad row). A block of 16 bytes holds at
// most 16 commas: while that many slots are left they are stored without a bound check. `limit` is
// the end of the whole text, so the last block of a row may be loaded in one piece when it lies
// inside.
size_t find_commas(std::string_view row, const char* limit, uint32_t* ends, size_t cap) {
  const char* p = row.data();
  const size_t n = row.size();
  size_t k = 0, i = 0;
  auto add = [&](size_t at) {
    if (k < cap) ends[k] = static_cast<uint32_t>(at);
    ++k;
  };
#if defined(__SSE2__)
  const __m128i comma = _mm_set1_epi8(',');
  for (; i < n && static_cast<size_t>(limit - (p + i)) >= 16; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    auto mask = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma)));
    if (n - i < 16) mask &= (1u << (n - i)) - 1u;  // bytes past the row's end
    if (k + 16 <= cap) {
      for (; mask != 0; mask &= mask - 1)
        ends[k++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctz(mask)));
    } else {
      for (; mask != 0; mask &= mask - 1) add(i + static_cast<size_t>(__builtin_ctz(mask)));
    }
  }
#else
  (void)limit;
#endif
  for (; i < n; ++i)
    if (p[i] == ',') add(i);
  return k + 1;
}

// find_commas and the search for the row's end in one pass: the commas of the line from `p` to
// its '\n' (or `limit`), whose length is set in `len`. Returns the field count. A row of a
// big log is touched once here instead of once by a newline search and once by find_commas.
size_t find_line_commas(const char* p, const char* limit, uint32_t* ends, size_t cap, size_t& len) {
  size_t k = 0, i = 0;
  auto add = [&](size_t at) {
    if (k < cap) ends[k] = static_cast<uint32_t>(at);
    ++k;
  };
#if defined(__SSE2__)
  const __m128i comma = _mm_set1_epi8(','), nl = _mm_set1_epi8('\n');
  for (; static_cast<size_t>(limit - (p + i)) >= 16; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    auto mask = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma)));
    const auto end = static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
    if (end != 0) mask &= (end & (0U - end)) - 1U;  // the commas before the first '\n'
    if (k + 16 <= cap) {
      for (; mask != 0; mask &= mask - 1)
        ends[k++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctz(mask)));
    } else {
      for (; mask != 0; mask &= mask - 1) add(i + static_cast<size_t>(__builtin_ctz(mask)));
    }
    if (end != 0) {
      len = i + static_cast<size_t>(__builtin_ctz(end));
      return k + 1;
    }
  }
#endif
  for (; p + i < limit && p[i] != '\n'; ++i)
    if (p[i] == ',') add(i);
  len = i;
  return k + 1;
}

// The line's rest from byte i on, where k of its commas are known, scanned by `scan` (a
// find_line_commas) and its ends shifted to count from p. Returns the field count.
template <class Scan>
size_t scan_rest(Scan scan, const char* p, size_t i, const char* limit, uint32_t* ends, size_t cap,
                 size_t k, size_t& len) {
  size_t rest = 0;
  const size_t more = scan(p + i, limit, ends + k, cap - k, rest);
  for (size_t j = k; j < std::min(cap, k + more - 1); ++j) ends[j] += static_cast<uint32_t>(i);
  len = i + rest;
  return k + more;
}

#if defined(__x86_64__)
// find_line_commas 32 bytes a step, for CPUs with AVX2 (chosen at run time, line_commas).
__attribute__((target("avx2"))) size_t find_line_commas_avx2(const char* p, const char* limit,
                                                             uint32_t* ends, size_t cap,
                                                             size_t& len) {
  size_t k = 0, i = 0;
  const __m256i comma = _mm256_set1_epi8(','), nl = _mm256_set1_epi8('\n');
  for (; static_cast<size_t>(limit - (p + i)) >= 32 && k + 32 <= cap; i += 32) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
    auto mask = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, comma)));
    const auto end = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)));
    if (end != 0) mask &= (end & (0U - end)) - 1U;  // the commas before the first '\n'
    for (; mask != 0; mask &= mask - 1)
      ends[k++] = static_cast<uint32_t>(i + static_cast<size_t>(__builtin_ctz(mask)));
    if (end != 0) {
      len = i + static_cast<size_t>(__builtin_ctz(end));
      return k + 1;
    }
  }
  // The rest (the text's last bytes, or a row with more commas than `cap` holds) as SSE2 does.
  return scan_rest(find_line_commas, p, i, limit, ends, cap, k, len);
}
#endif

// The commas and end of the line at `p` (find_line_commas), by the widest path this CPU has.
size_t line_commas(const char* p, const char* limit, uint32_t* ends, size_t cap, size_t& len) {
#if defined(__x86_64__)
  if (cpu::has_avx2()) return find_line_commas_avx2(p, limit, ends, cap, len);
#endif
  return find_line_commas(p, limit, ends, cap, len);
}

// Where an earlier row of the text has its commas and its '\n', per 64-byte step: a later row
// laid out the same way is scanned against it (scan_like_avx2).
struct RowLayout {
  struct Step {
    uint64_t commas = 0;  // bit b: a comma at byte 64 * step + b
    uint64_t end = 0;     // the '\n' there, as its bit; 0 in every step but the last
  };
  std::vector<Step> steps;  // up to the step holding the '\n'; empty: nothing to compare with

  // From the row's first `commas` field ends and the offset of its '\n'.
  void set(const uint32_t* ends, size_t commas, size_t nl) {
    steps.clear();
    if (nl >= kMaxBytes) return;  // a row this long is scanned alone
    steps.resize(nl / 64 + 1);
    for (size_t j = 0; j < commas; ++j) steps[ends[j] / 64].commas |= uint64_t{1} << (ends[j] % 64);
    steps[nl / 64].end = uint64_t{1} << (nl % 64);
  }
  static constexpr size_t kMaxBytes = 4096;
};

// What scan_like_avx2 found of a row against the earlier one.
struct RowDiff {
  const char* from = nullptr;  // the earlier row; nullptr: the row was scanned alone
  uint64_t changed = 0;        // bit f: field f's bytes differ, or were not compared
  bool same_layout = false;    // every comma and the '\n' where the earlier row has them
};

// The fields that the bytes marked in `differ` fall in, as bits into `changed`: `commas` marks
// the step's commas (none of them differs) and `first` is the field the step begins in; rows
// have at most 64 fields here. A 1 added at a differing byte of the gaps between commas carries
// up to the field's comma, or out of the word for the field going on into the next step; bytes
// after the row's '\n' are gaps too, so its last field carries out. One turn per changed field,
// not per byte.
inline void note_fields(uint64_t differ, uint64_t commas, size_t first, uint64_t& changed) {
  if (differ == 0) return;
  uint64_t touched = 0;
  const bool carry = __builtin_add_overflow(~commas, differ, &touched);
  for (touched &= commas; touched != 0; touched &= touched - 1) {
    const uint64_t below = (touched & (0 - touched)) - 1;
    changed |= uint64_t{1} << (first + static_cast<size_t>(__builtin_popcountll(commas & below)));
  }
  if (carry) changed |= uint64_t{1} << (first + static_cast<size_t>(__builtin_popcountll(commas)));
}

// Entries a memo's field ends hold past the row's: same_prefix reads 4, copy_ends 7.
constexpr size_t kEndsSlack = 8;

// n field ends copied 8 at a time (both arrays hold kEndsSlack entries past n): a libc call
// per row, for some 60 bytes, cost more than the copy (2-3 % of a CSV's parse).
inline void copy_ends(uint32_t* to, const uint32_t* from, size_t n) {
  for (size_t i = 0; i < n; i += 8) std::memcpy(to + i, from + i, 8 * sizeof(uint32_t));
}

#if defined(__x86_64__)
// The byte masks of two 32-byte compares as one 64-bit mask (lo: bytes 0-31).
__attribute__((target("avx2"), always_inline)) inline uint64_t bits64(__m256i lo, __m256i hi) {
  return static_cast<uint32_t>(_mm256_movemask_epi8(lo)) |
         uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(hi))} << 32;
}

// line_commas for a row that likely has the layout of an earlier one (`prev`, its field ends
// and `layout`; it lies before `p` in the same text). While each 64-byte step holds its commas
// and '\n' where the earlier row's does, the ends are that row's and only the bytes that
// differ are looked at, as the fields they fall in. From the first step that differs on, the
// row is scanned alone and its later fields count as changed. Returns the field count.
__attribute__((target("avx2,popcnt"))) size_t scan_like_avx2(
    const char* p, const char* limit, const char* prev, const uint32_t* prev_ends,
    const RowLayout& layout, uint32_t* ends, size_t cap, size_t& len, RowDiff& diff) {
  const __m256i comma = _mm256_set1_epi8(','), nl = _mm256_set1_epi8('\n');
  size_t i = 0, k = 0;
  uint64_t changed = 0;
  const size_t steps = std::min(layout.steps.size(), static_cast<size_t>(limit - p) / 64);
  for (size_t s = 0; s < steps; ++s) {
    const auto* now = reinterpret_cast<const __m256i*>(p + i);
    const auto* was = reinterpret_cast<const __m256i*>(prev + i);
    const __m256i lo = _mm256_loadu_si256(now), hi = _mm256_loadu_si256(now + 1);
    const uint64_t same = bits64(_mm256_cmpeq_epi8(lo, _mm256_loadu_si256(was)),
                                 _mm256_cmpeq_epi8(hi, _mm256_loadu_si256(was + 1)));
    // The earlier row's commas and '\n' in this step; where all 64 bytes are that row's
    // (identity, limits, steady readings: most of a -l row) they are this row's too, and
    // nothing changed: no search needed.
    const uint64_t commas = layout.steps[s].commas, end = layout.steps[s].end;
    uint64_t differ = 0;
    if (same != ~uint64_t{0}) {
      // The same layout: no comma or '\n' up to the earlier row's '\n' other than its own,
      // and their bytes unchanged (a ',' where it had the '\n' differs).
      const uint64_t delims =
          bits64(_mm256_or_si256(_mm256_cmpeq_epi8(lo, comma), _mm256_cmpeq_epi8(lo, nl)),
                 _mm256_or_si256(_mm256_cmpeq_epi8(hi, comma), _mm256_cmpeq_epi8(hi, nl)));
      const uint64_t expect = commas | end;
      const uint64_t upto = end != 0 ? (end << 1) - 1 : ~uint64_t{0};  // through the '\n'
      if ((delims & upto) != expect || (~same & expect) != 0) break;
      differ = end != 0 ? ~same & (end - 1) : ~same;
    }
    note_fields(differ, commas, k, changed);
    k += static_cast<size_t>(__builtin_popcountll(commas));
    if (end != 0) {
      copy_ends(ends, prev_ends, k);
      len = i + static_cast<size_t>(__builtin_ctzll(end));
      diff = {prev, changed, true};
      return k + 1;
    }
    i += 64;
  }
  copy_ends(ends, prev_ends, k);
  diff = {prev, changed | (k < 64 ? ~uint64_t{0} << k : 0), false};
  return scan_rest(line_commas, p, i, limit, ends, cap, k, len);
}
#endif

// text::trim of a field as nvidia-smi writes it (one space after the comma, none at the end)
// without a call; any other field is trimmed by text::trim.
[[gnu::always_inline]] inline std::string_view trim_field(std::string_view v) {
  if (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  if (v.empty() || (!text::is_space(v.front()) && !text::is_space(v.back()))) return v;
  return text::trim(v);
}

// How many of the first `cols` entries of a and b are equal; both hold 4 readable entries past
// any index below cols.
size_t same_prefix(const uint32_t* a, const uint32_t* b, size_t cols) {
  size_t i = 0;
#if defined(__SSE2__)
  for (; i < cols; i += 4) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const auto differ = ~static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi32(x, y))) & 0xFFFFu;
    if (differ != 0) return std::min(cols, i + static_cast<size_t>(__builtin_ctz(differ)) / 4);
  }
  return cols;
#else
  while (i < cols && a[i] == b[i]) ++i;
  return i;
#endif
}

// The fields of a row (`ends` as find_commas leaves them, ends[cols - 1] = the row's length,
// cols <= 64) whose bytes differ from those of an earlier row of the same text at `prev` (its
// field ends in `prev_ends`), as bits. Once the two rows' fields stop ending at the same
// offsets every later field counts as changed; before that, a field changed when a byte in it
// did. Both end arrays hold 4 entries past cols.
uint64_t changed_fields(std::string_view line, const char* text_end, const uint32_t* ends,
                        size_t cols, const char* prev, const uint32_t* prev_ends) {
  const size_t same = same_prefix(ends, prev_ends, cols);
  uint64_t changed = same < cols ? ~uint64_t{0} << same : 0;
  const size_t scan_end = same == 0 ? 0 : ends[same - 1];  // the bytes of those fields
  size_t f = 0;
  // Bit k of `differ`: byte at + k differs. One step per changed field, not per byte.
  auto note = [&](size_t at, uint32_t differ) {
    while (differ != 0) {
      const size_t pos = at + static_cast<size_t>(__builtin_ctz(differ));
      while (ends[f] < pos) ++f;
      changed |= uint64_t{1} << f;
      const size_t past = ends[f] + 1 - at;  // the bytes of field f and its comma
      differ = past >= 32 ? 0 : differ & (~0u << past);
    }
  };
  // Read in steps of 16 up to `whole`: past the row's end, but inside the text (the earlier
  // row lies before this one), except for the text's last row, which counts as all changed.
  const size_t whole = (scan_end + 15) & ~size_t{15};
  if (static_cast<size_t>(text_end - line.data()) < whole) return ~uint64_t{0};
#if defined(__SSE2__)
  for (size_t at = 0; at < whole; at += 16) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(line.data() + at));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(prev + at));
    const auto differ = ~static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y))) & 0xFFFFu;
    note(at, scan_end - at < 16 ? differ & ((1u << (scan_end - at)) - 1u) : differ);
  }
#else
  for (size_t at = 0; at < scan_end; ++at)
    if (line[at] != prev[at]) note(at, 1u);
#endif
  return cols == 64 ? changed : changed & ((uint64_t{1} << cols) - 1);
}

// Clears a reused GpuState but keeps its identity strings: the identity columns overwrite
// them only when they differ (see apply_identity), saving an allocation per row.
void reset_gpu(GpuState& g) {
  std::string name = std::move(g.info.name), uuid = std::move(g.info.uuid),
              bus = std::move(g.info.pci_bus_id);
  g.info = DeviceInfo{};
  g.sample = GpuSample{};
  g.info.name = std::move(name);
  g.info.uuid = std::move(uuid);
  g.info.pci_bus_id = std::move(bus);
  g.access = GpuAccess::kOk;
  g.errors.clear();
  g.failed_readings.clear();
}

// "1, Reset   <= GPU is unusable, reset required": what a person wrote after a row.
std::string_view without_annotation(std::string_view row) {
  for (std::string_view mark : {"<=", "<--", "<-", " # ", " // "}) {
    const size_t p = row.find(mark);
    if (p != std::string_view::npos && p > 0) return text::trim(row.substr(0, p));
  }
  return row;
}

// "0".."99" written canonically (no sign, no leading zero): such ids are equal as text
// exactly when equal as numbers, so a group can track them in a bit set.
bool small_canonical_id(std::string_view id, unsigned& out) {
  const unsigned a = id.size() >= 1 ? smi::fast::detail::digit(id[0]) : 10u;
  if (id.size() == 1 && a <= 9) {
    out = a;
    return true;
  }
  if (id.size() != 2 || a == 0 || a > 9) return false;
  const unsigned b = smi::fast::detail::digit(id[1]);
  if (b > 9) return false;
  out = a * 10 + b;
  return true;
}

// How many columns of the plan have `op`.
size_t columns_with(const smi::CsvPlan& plan, FastOp op) {
  return static_cast<size_t>(std::count_if(plan.cols.begin(), plan.cols.end(),
                                           [op](const smi::FastColumn& c) { return c.op == op; }));
}

// The columns of a lean plan whose field may be kept when its bytes repeat (SlotMemo): those
// that set their own slot from the field alone, and ignored columns (only checked for a failed
// reading). Not the index (it falls back to the row's place in its group), not the generic
// ones (they write the snapshot), not an identity column named twice (the later one wins).
uint64_t memo_columns(const smi::CsvPlan& plan) {
  uint64_t out = 0;
  for (size_t i = 0; i < plan.cols.size() && i < 64; ++i) {
    const FastOp op = plan.cols[i].op;
    if (op == FastOp::kGeneric || op == FastOp::kIndex) continue;
    const bool identity = op == FastOp::kName || op == FastOp::kUuid || op == FastOp::kBusId;
    if (identity && columns_with(plan, op) > 1) continue;
    out |= uint64_t{1} << i;
  }
  return out;
}

class CsvParser {
 public:
  CsvParser(std::string_view origin, const SnapshotSink& sink, std::vector<Error>* errors)
      : origin_(origin), sink_(sink), errors_(errors) {
    cur_.source = "smi-csv:" + std::string(origin);
  }

  // `given`: names from a command line or inferred, not a header nvidia-smi printed.
  Status header(std::string_view line, size_t line_no, bool given = false);
  // Both return 0 when the row was read, else its field count (the row was not used).
  size_t row_reference(std::string_view line, size_t line_no);
  // `fields`: the row's field count when its commas are in place already (scan_row), else 0.
  size_t row_fast(std::string_view line, size_t line_no, const char* text_end, size_t fields = 0);
  // The line from `p` up to its '\n' or `limit`: its length, its commas into place for
  // row_fast; returns the field count.
  size_t scan_row(const char* p, const char* limit, size_t& len);
  void row_error(size_t line_no, size_t got);
  size_t finish();
  std::string_view header_line() const { return header_text_; }
  // How far the text (from `base`) is done with: `offset`, or the oldest row the memo may still
  // compare with. Its pages are handed back behind this point; reading one after that would
  // fault it in again and keep it (with the pages around it) for the rest of the run.
  size_t read_behind(const char* base, size_t offset) const {
    for (const SlotMemo& m : memo_)
      if (m.row != nullptr) offset = std::min(offset, static_cast<size_t>(m.row - base));
    return offset;
  }

 private:
  void emit(bool last = false);
  bool starts_new_group(std::string_view id, std::optional<int64_t> ts) const;
  bool fast_new_group(std::string_view id, bool has_ts, int64_t ts, bool canon, unsigned num) const;
  // Whether a row's time (`has_ts`: it has one) lies outside the group's window.
  bool leaves_group(bool has_ts, int64_t ts) const {
    return has_ts && group_has_ts_ && (ts - group_ts_ms_ > kGroupWindowMs || ts < group_ts_ms_);
  }
  void note_fast_id(std::string_view id, bool canon, unsigned num);
  std::optional<int64_t> fast_timestamp(std::string_view field);
  std::optional<int64_t> seconds_of(std::string_view v);
  GpuState& next_gpu(bool has_ts, int64_t ts);
  // Returns whether a capability of g may have changed.
  bool apply_fast(const smi::FastColumn& c, size_t col, std::string_view v, GpuState& g);
  void apply_row(std::string_view line, const char* text_end, GpuState& g, uint64_t done);
  // The fields in `parse` into g; returns those holding a failed reading.
  uint64_t apply_fields(uint64_t parse, std::string_view line, GpuState& g);
  // Field i into g; whether it holds a failed reading. `caps`: a capability may have changed.
  bool apply_field(size_t i, std::string_view line, GpuState& g, bool& caps);

  // Lean plans: the last row each slot of a group held. A -l log repeats most of a GPU's row
  // from one second to the next (identity, limits, totals, steady clocks and loads), and a
  // field whose bytes equal that row's field still holds the value parsed then in the reused
  // GpuState: it is neither parsed nor checked for a failed reading again.
  struct SlotMemo {
    const char* row = nullptr;   // the row, in the text being parsed (it outlives the parse)
    std::vector<uint32_t> ends;  // its field ends, as ends_
    uint64_t reusable = 0;       // bit i: field i was parsed, is no failed reading, may be kept
    RowLayout layout;            // its commas and '\n' (AVX2 only: scan_like_avx2)
  };
  const SlotMemo* likely_memo() const;
  void remember(SlotMemo& m, std::string_view line, bool same_layout);

  std::string_view origin_;
  const SnapshotSink& sink_;
  std::vector<Error>* errors_;
  std::vector<smi::CsvColumn> cols_;
  smi::CsvPlan plan_;
  std::vector<uint32_t> ends_;
  std::vector<SlotMemo> memo_;     // per slot of a group (lean plans only)
  RowDiff diff_;                   // the last scanned row against likely_memo()'s
  const char* scanned_ = nullptr;  // that row, and the offset of its '\n'
  size_t scanned_nl_ = 0;
  uint64_t memo_cols_ = 0;   // bit i: column i may be kept (memo_columns)
  std::string header_text_;  // a copy: the text's first pages are handed back (read_behind)
  size_t header_line_no_ = 0;
  int id_col_ = -1, ts_col_ = -1;
  bool id_is_index_ = false;  // the id column is the one index column (row_fast reads it once)
  std::vector<std::string_view> fields_;
  Snapshot cur_;
  // Per GPU of cur_: derive_capabilities is due (a slot was filled or emptied since). A lean
  // plan's rows mostly refill the same slots, so most snapshots need none.
  std::vector<uint8_t> caps_stale_;
  size_t in_group_ = 0;
  std::vector<std::string> group_ids_;  // reference path; fast path: other (non-canonical) ids
  size_t other_ids_ = 0;
  uint64_t id_bits_[2] = {0, 0};  // fast path: canonical ids 0..99 seen in the group
  // The group's time, as two scalars: an optional copied per row went through the stack as a
  // byte and a word read back as 16 bytes, a store-forwarding stall (a quarter of row_fast).
  int64_t group_ts_ms_ = 0;
  bool group_has_ts_ = false;
  std::string last_ts_text_;
  std::optional<int64_t> last_ts_;
  uint64_t ts_text_[3] = {};  // fast path: the last timestamp (words 0-7, 8-15, last 8)
  size_t ts_text_size_ = 0;   // its length; 0: none, or too long to be held by the words
  std::optional<int64_t> ts_text_ms_;
  uint64_t ts_prefix_[3] = {};  // fast path: the "YYYY/MM/DD hh:mm:ss" last parsed (words)
  bool ts_prefix_set_ = false;
  std::optional<int64_t> ts_prefix_ms_;
  uint64_t ts_day_[2] = {};  // "YYYY/MM/DD " of the day last parsed (words), and its start
  bool ts_day_set_ = false;
  std::optional<int64_t> ts_day_ms_;
  size_t emitted_ = 0, bad_rows_ = 0;
  bool failures_seen_ = false;  // a failed reading was noted: lean rows clear them per row
  // Headerless rows pasted without any GPU identity column (name and values only) are the GPUs
  // of one moment in order, as a person reads one nvidia-smi call; a logged header's rows
  // without identity are each their own moment.
  bool rows_are_gpus_ = false;
};

Status CsvParser::header(std::string_view line, size_t line_no, bool given) {
  header_text_.assign(line);
  header_line_no_ = line_no;
  rows_are_gpus_ = given;
  split_row(line, fields_);
  cols_.clear();
  size_t known = 0;
  for (size_t i = 0; i < fields_.size(); ++i) {
    cols_.push_back(smi::csv_column_for(fields_[i]));
    if (cols_.back().field != smi::CsvField::kIgnore) ++known;
    if (cols_.back().field == smi::CsvField::kTimestamp) ts_col_ = static_cast<int>(i);
    if (cols_.back().field == smi::CsvField::kIndex ||
        (id_col_ < 0 && (cols_.back().field == smi::CsvField::kBusId ||
                         cols_.back().field == smi::CsvField::kUuid)))
      id_col_ = static_cast<int>(i);
  }
  if (known == 0 && !given) {
    return make_error("capture.smi_csv",
                      "expected a --query-gpu CSV header naming known fields "
                      "(timestamp, index, temperature.gpu, ...)",
                      std::string(origin_) + ":" + std::to_string(line_no));
  }
  plan_ = smi::make_csv_plan(cols_);
  ends_.assign(cols_.size() + 32, 0);  // +32: see find_commas, find_line_commas_avx2
  memo_.clear();
  memo_cols_ = plan_.lean && cols_.size() <= 64 ? memo_columns(plan_) : 0;
  id_is_index_ = id_col_ >= 0 && id_col_ < 64 &&
                 plan_.cols[static_cast<size_t>(id_col_)].op == FastOp::kIndex &&
                 columns_with(plan_, FastOp::kIndex) == 1;
  return {};
}

bool CsvParser::starts_new_group(std::string_view id, std::optional<int64_t> ts) const {
  if (in_group_ == 0) return false;
  if (leaves_group(ts.has_value(), ts.value_or(0))) return true;
  if (id_col_ < 0) return !rows_are_gpus_ || in_group_ >= kMaxPastedGpus;  // see rows_are_gpus_
  for (size_t i = 0; i < in_group_; ++i)
    if (group_ids_[i] == id) return true;
  return false;
}

void CsvParser::row_error(size_t line_no, size_t got) {
  ++bad_rows_;
  if (!errors_ || bad_rows_ > kMaxRowErrors) return;
  errors_->push_back(make_error("capture.smi_csv",
                                "expected " + std::to_string(cols_.size()) +
                                    " comma-separated fields as in the header (line " +
                                    std::to_string(header_line_no_) + "), got " +
                                    std::to_string(got) + "; row skipped",
                                std::string(origin_) + ":" + std::to_string(line_no)));
}

size_t CsvParser::row_reference(std::string_view line, size_t line_no) {
  (void)line_no;
  split_row(line, fields_);
  if (fields_.size() != cols_.size()) return fields_.size();
  std::optional<int64_t> ts;
  if (ts_col_ >= 0) {
    const std::string_view t = fields_[static_cast<size_t>(ts_col_)];
    if (t != last_ts_text_) {  // rows of one cycle often share the text: parse once
      last_ts_text_.assign(t);
      last_ts_ = parse_csv_timestamp(t);
    }
    ts = last_ts_;
  }
  const std::string_view id = id_col_ >= 0 ? text::trim(fields_[static_cast<size_t>(id_col_)]) : "";
  if (starts_new_group(id, ts)) emit();
  if (in_group_ >= group_ids_.size()) group_ids_.emplace_back();
  group_ids_[in_group_].assign(id);
  GpuState& g = next_gpu(ts.has_value(), ts.value_or(0));
  reset_gpu(g);
  caps_stale_[in_group_] = 1;
  g.info.index = static_cast<unsigned>(in_group_);
  for (size_t i = 0; i < cols_.size(); ++i) {
    if (cols_[i].field != smi::CsvField::kIgnore)
      smi::apply_csv_value(cols_[i], fields_[i], cur_, g);
    smi::note_failed_reading(cols_[i].name, fields_[i], g);
  }
  ++in_group_;
  return 0;
}

__attribute__((always_inline)) inline GpuState& CsvParser::next_gpu(bool has_ts, int64_t ts) {
  if (in_group_ == 0) {
    group_has_ts_ = has_ts;
    group_ts_ms_ = ts;
    cur_.time_ms = has_ts ? ts : 0;
  }
  if (in_group_ >= cur_.gpus.size()) {
    cur_.gpus.emplace_back();
    caps_stale_.push_back(1);
  }
  return cur_.gpus[in_group_];
}

// Rows of one -l cycle share the date and second and differ in milliseconds at most: the
// calendar arithmetic runs once per second of log.
std::optional<int64_t> CsvParser::fast_timestamp(std::string_view field) {
  const std::string_view v = trim_field(field);
  if (v.size() < 19) return std::nullopt;
  // The rows of one query share their timestamp: up to 24 bytes, it is three words, bytes 0-7,
  // 8-15 and the last 8.
  uint64_t t[3];
  std::memcpy(&t[0], v.data(), 8);
  std::memcpy(&t[1], v.data() + 8, 8);
  std::memcpy(&t[2], v.data() + v.size() - 8, 8);
  if (v.size() == ts_text_size_ && t[0] == ts_text_[0] && t[1] == ts_text_[1] &&
      t[2] == ts_text_[2])
    return ts_text_ms_;
  // "YYYY/MM/DD hh:mm:ss" as three overlapping 8-byte words: bytes 0-7, 8-15 and 11-18.
  uint64_t w[3] = {t[0], t[1], 0};
  std::memcpy(&w[2], v.data() + 11, 8);
  if (!ts_prefix_set_ || w[0] != ts_prefix_[0] || w[1] != ts_prefix_[1] || w[2] != ts_prefix_[2]) {
    std::memcpy(ts_prefix_, w, sizeof w);
    ts_prefix_set_ = true;
    ts_prefix_ms_ = seconds_of(v);
  }
  std::memcpy(ts_text_, t, sizeof t);
  ts_text_size_ = v.size() <= 24 ? v.size() : 0;
  ts_text_ms_ =
      ts_prefix_ms_ ? std::optional<int64_t>(*ts_prefix_ms_ + parse_ts_millis(v)) : std::nullopt;
  return ts_text_ms_;
}

// parse_ts_seconds of a trimmed timestamp of >= 19 bytes, the calendar arithmetic once per day
// of log: the second changes every cycle, the date once a day.
std::optional<int64_t> CsvParser::seconds_of(std::string_view v) {
  auto two = [&](size_t at) -> int {
    const unsigned a = smi::fast::detail::digit(v[at]), b = smi::fast::detail::digit(v[at + 1]);
    return a <= 9 && b <= 9 ? static_cast<int>(a * 10 + b) : -1;
  };
  const int h = two(11), mi = two(14), sec = two(17);
  if (h < 0 || mi < 0 || sec < 0) return std::nullopt;
  const int64_t in_day = ((int64_t{h} * 60 + mi) * 60 + sec) * 1000;
  uint64_t day[2] = {0, 0};
  std::memcpy(&day[0], v.data(), 8);
  std::memcpy(&day[1], v.data() + 8, 3);
  if (!ts_day_set_ || day[0] != ts_day_[0] || day[1] != ts_day_[1]) {
    std::memcpy(ts_day_, day, sizeof day);
    ts_day_set_ = true;
    const auto whole = parse_ts_seconds(v);  // the time's digits are valid: only the date fails
    ts_day_ms_ = whole ? std::optional<int64_t>(*whole - in_day) : std::nullopt;
  }
  if (!ts_day_ms_) return std::nullopt;
  return *ts_day_ms_ + in_day;
}

bool CsvParser::fast_new_group(std::string_view id, bool has_ts, int64_t ts, bool canon,
                               unsigned num) const {
  if (in_group_ == 0) return false;
  if (leaves_group(has_ts, ts)) return true;
  if (id_col_ < 0) return !rows_are_gpus_ || in_group_ >= kMaxPastedGpus;
  if (canon) return (id_bits_[num >> 6] >> (num & 63)) & 1u;
  for (size_t i = 0; i < other_ids_; ++i)
    if (group_ids_[i] == id) return true;
  return false;
}

void CsvParser::note_fast_id(std::string_view id, bool canon, unsigned num) {
  if (in_group_ == 0) {
    id_bits_[0] = id_bits_[1] = 0;
    other_ids_ = 0;
  }
  if (canon) {
    id_bits_[num >> 6] |= uint64_t{1} << (num & 63);
    return;
  }
  if (other_ids_ >= group_ids_.size()) group_ids_.emplace_back();
  group_ids_[other_ids_++].assign(id);
}

__attribute__((always_inline)) inline bool CsvParser::apply_fast(const smi::FastColumn& c,
                                                                 size_t col, std::string_view v,
                                                                 GpuState& g) {
  namespace fast = smi::fast;
  GpuSample& s = g.sample;
  switch (c.op) {
    case FastOp::kSkip:
      return false;
    case FastOp::kGeneric:
      smi::apply_csv_value(cols_[col], v, cur_, g);
      return true;
    case FastOp::kUnsigned:
      return fast::put_unsigned(s.*c.u, v);
    case FastOp::kU64:
      return fast::put_u64(s.*c.u64, v);
    case FastOp::kInt:
      return fast::put_int(s.*c.i, v);
    case FastOp::kWatts:
      return fast::put_watts_mw(s.*c.w, v);
    case FastOp::kMem:
      return fast::put_mem_bytes(s.*c.u64, v);
    case FastOp::kMemTotal: {
      const bool changed = fast::put_mem_bytes(s.mem_total_bytes, v);
      g.info.mem_total_bytes = s.mem_total_bytes;
      return changed;
    }
    case FastOp::kHex:
      return fast::put_hex(s.clock_reasons, v);
    case FastOp::kPstate:
      return fast::put_pstate(s.pstate, v);
    case FastOp::kBool:
      return fast::put_bool(s.*c.b, v);
    case FastOp::kIndex:
      g.info.index = fast::to_unsigned(v).value_or(g.info.index);
      return false;
    case FastOp::kName:
      if (const auto t = text::trim(v); g.info.name != t) g.info.name.assign(t);
      return false;
    case FastOp::kUuid:
      if (const auto t = text::trim(v); g.info.uuid != t) g.info.uuid.assign(t);
      return false;
    case FastOp::kBusId:  // rows of a -l log repeat the normalised id: nothing to do
      if (text::trim(v) != g.info.pci_bus_id) smi::apply_csv_value(cols_[col], v, cur_, g);
      return false;
  }
  return true;
}

size_t CsvParser::row_fast(std::string_view line, size_t line_no, const char* text_end,
                           size_t fields) {
  (void)line_no;
  if (fields == 0) diff_ = {}, scanned_ = nullptr;  // not the row scan_row saw
  uint32_t* ends = ends_.data();
  const size_t cols = cols_.size();
  const size_t n = fields != 0 ? fields : find_commas(line, text_end, ends, ends_.size());
  if (n != cols) return n;
  ends[cols - 1] = static_cast<uint32_t>(line.size());
  auto field = [&](size_t i) {
    const size_t b = i == 0 ? 0 : ends[i - 1] + 1;
    return std::string_view(line.data() + b, ends[i] - b);
  };
  std::optional<int64_t> ts;
  if (ts_col_ >= 0) ts = fast_timestamp(field(static_cast<size_t>(ts_col_)));
  const bool has_ts = ts.has_value();
  const int64_t ts_ms = ts.value_or(0);
  const std::string_view id = id_col_ >= 0 ? trim_field(field(static_cast<size_t>(id_col_))) : "";
  unsigned num = 0;
  const bool canon = id_col_ >= 0 && small_canonical_id(id, num);
  if (fast_new_group(id, has_ts, ts_ms, canon, num)) emit();
  note_fast_id(id, canon, num);
  GpuState& g = next_gpu(has_ts, ts_ms);
  if (!plan_.lean) {
    reset_gpu(g);
    caps_stale_[in_group_] = 1;
  } else if (failures_seen_) {  // a lean plan reuses the state: clear last row's failures
    g.access = GpuAccess::kOk;
    g.failed_readings.clear();
  }
  g.info.index = static_cast<unsigned>(in_group_);
  // Columns read already: an index column as the id ("0".."99" is that number), a timestamp
  // that parsed (it starts with a digit: no failed reading).
  uint64_t done = has_ts && ts_col_ < 64 ? uint64_t{1} << ts_col_ : 0;
  if (canon && id_is_index_) {
    g.info.index = num;
    done |= uint64_t{1} << id_col_;
  }
  apply_row(line, text_end, g, done);
  ++in_group_;
  return 0;
}

// Field i of the row into g, by the op its column has; whether it holds a failed reading.
__attribute__((always_inline)) inline bool CsvParser::apply_field(size_t i, std::string_view line,
                                                                  GpuState& g, bool& caps) {
  const size_t b = i == 0 ? 0 : ends_[i - 1] + 1;
  const std::string_view v(line.data() + b, ends_[i] - b);
  caps |= apply_fast(plan_.cols[i], i, v, g);
  return smi::may_be_failed_reading(v) && smi::note_failed_reading(cols_[i].name, v, g);
}

// The flags stay in locals while the fields are applied: caps_stale_ is a vector of bytes, and a
// store through a byte may alias anything, so the compiler reloaded ends_, plan_ and the row
// after each field.
uint64_t CsvParser::apply_fields(uint64_t parse, std::string_view line, GpuState& g) {
  bool caps = false, wide_failed = false;
  uint64_t failed = 0;
  for (uint64_t left = parse; left != 0; left &= left - 1) {
    const auto i = static_cast<size_t>(__builtin_ctzll(left));
    if (apply_field(i, line, g, caps)) failed |= uint64_t{1} << i;
  }
  for (size_t i = 64; i < cols_.size(); ++i)  // no memo this wide
    wide_failed |= apply_field(i, line, g, caps);
  if (caps) caps_stale_[in_group_] = 1;
  if (failed != 0 || wide_failed) failures_seen_ = true;
  return failed;
}

// The row's fields into g, each parsed and checked for a failed reading, except those the
// memo of g's slot holds already (lean plans) and those in `done`.
void CsvParser::apply_row(std::string_view line, const char* text_end, GpuState& g, uint64_t done) {
  const size_t cols = cols_.size();
  uint64_t parse = ~uint64_t{0}, kept = 0;
  SlotMemo* m = nullptr;
  if (memo_cols_ != 0) {
    if (in_group_ >= memo_.size()) {
      memo_.resize(in_group_ + 1);
      memo_.back().ends.assign(cols + kEndsSlack, 0);
    }
    m = &memo_[in_group_];
    const bool scanned_against = diff_.from != nullptr && diff_.from == m->row;
    if (m->reusable != 0) {
      const uint64_t changed = scanned_against ? diff_.changed
                                               : changed_fields(line, text_end, ends_.data(), cols,
                                                                m->row, m->ends.data());
      parse = changed | ~m->reusable;
      kept = m->reusable & ~parse;
    }
    remember(*m, line, scanned_against && diff_.same_layout);
  }
  if (cols < 64) parse &= (uint64_t{1} << cols) - 1;
  parse &= ~done;
  const uint64_t failed = apply_fields(parse, line, g);
  // A field parsed now may be kept next time unless it held a failed reading.
  if (m) m->reusable = kept | (parse & memo_cols_ & ~failed);
}

size_t CsvParser::scan_row(const char* p, const char* limit, size_t& len) {
  diff_ = {};
  scanned_ = p;
  size_t n = 0;
#if defined(__x86_64__)
  if (const SlotMemo* like = likely_memo())
    n = scan_like_avx2(p, limit, like->row, like->ends.data(), like->layout, ends_.data(),
                       ends_.size(), len, diff_);
  else
#endif
    n = line_commas(p, limit, ends_.data(), ends_.size(), len);
  scanned_nl_ = len;
  return n;
}

// The memo of the slot the next row most likely fills: the group's next one, or the first once
// the group is as large as the last (a new moment begins). AVX2 and rows of up to 64 fields
// only (scan_like_avx2).
const CsvParser::SlotMemo* CsvParser::likely_memo() const {
#if defined(__x86_64__)
  if (memo_.empty() || cols_.size() > 64 || !cpu::has_avx2()) return nullptr;
  const SlotMemo& m = memo_[in_group_ < memo_.size() ? in_group_ : 0];
  return m.row != nullptr && m.reusable != 0 && !m.layout.steps.empty() ? &m : nullptr;
#else
  return nullptr;
#endif
}

// The row as its slot's memo: its place, its ends, and its layout unless it is the same.
void CsvParser::remember(SlotMemo& m, std::string_view line, bool same_layout) {
  const size_t cols = cols_.size();
  m.row = line.data();
  if (same_layout) {  // scan_like_avx2 took the commas from m: only the length may differ
    m.ends[cols - 1] = ends_[cols - 1];
    return;
  }
  copy_ends(m.ends.data(), ends_.data(), cols);
#if defined(__x86_64__)
  if (!cpu::has_avx2()) return;
  if (scanned_ == line.data())
    m.layout.set(ends_.data(), cols - 1, scanned_nl_);
  else
    m.layout.steps.clear();
#endif
}

void CsvParser::emit(bool last) {
  if (in_group_ == 0) return;
  cur_.gpus.resize(in_group_);
  caps_stale_.resize(in_group_);
  if (memo_.size() > in_group_) memo_.resize(in_group_);  // those GpuStates are gone
  for (size_t i = 0; i < in_group_; ++i) {
    if (!caps_stale_[i]) continue;
    smi::derive_capabilities(cur_.gpus[i]);
    caps_stale_[i] = 0;
  }
  sink_(cur_, last);
  ++emitted_;
  in_group_ = 0;
}

size_t CsvParser::finish() {
  emit(true);
  if (errors_ && bad_rows_ > kMaxRowErrors) {
    errors_->push_back(make_error("capture.smi_csv",
                                  std::to_string(bad_rows_ - kMaxRowErrors) +
                                      " more rows with the wrong number of fields were skipped",
                                  std::string(origin_)));
  }
  return emitted_;
}

}  // namespace

namespace smi {

Result<size_t> parse_smi_csv_path(std::string_view text, std::string_view origin,
                                  const SnapshotSink& sink, std::vector<Error>* errors,
                                  CsvPath path) {
  return parse_smi_csv_block(text, origin, sink, errors, path, nullptr, nullptr);
}

namespace {

bool is_gpu_name(std::string_view v) {
  for (std::string_view p :
       {"NVIDIA ", "GeForce ", "Tesla ", "Quadro ", "TITAN ", "Titan ", "GRID ", "A100", "H100",
        "H200", "B200", "L40", "A10G", "A40", "RTX A", "RTX PRO"})
    if (text::starts_with(v, p)) return true;
  return false;
}

bool is_uuid(std::string_view v) {
  return (text::starts_with(v, "GPU-") || text::starts_with(v, "MIG-")) && v.size() >= 20;
}

bool all_digits(std::string_view v) {
  if (v.empty()) return false;
  for (char c : v)
    if (c < '0' || c > '9') return false;
  return true;
}

// "535.54.03", "470.57.02", "580.65": a driver version.
bool is_driver_version(std::string_view v) {
  const size_t dot = v.find('.');
  return dot == 3 && all_digits(v.substr(0, 3)) && v.size() >= 6 && v.size() <= 10 &&
         std::all_of(v.begin(), v.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); });
}

// A value nvidia-smi prints in a CSV cell: a number with an optional unit, a bracketed note,
// N/A, a mode word, a timestamp. Prose is none of these.
bool is_plain_value(std::string_view v) {
  if (v.empty() || v.size() > 40) return false;
  if (v.front() == '[' && v.back() == ']') return true;
  if (text::is_na(v) || v == "ERR!") return true;
  for (std::string_view w : {"Enabled",    "Disabled",
                             "Yes",        "No",
                             "On",         "Off",
                             "Active",     "Not Active",
                             "Default",    "Exclusive_Process",
                             "Prohibited", "None",
                             "Reset",      "Reboot",
                             "Drain P2P",  "Drain and Reset",
                             "Completed",  "In Progress",
                             "Success",    "Failure"})
    if (v == w) return true;
  const size_t sp = v.find(' ');
  const std::string_view num = v.substr(0, sp);
  if (!text::parse_double(num)) return text::starts_with(v, "0x") || v.find('/') == 4;
  if (sp == std::string_view::npos) return true;
  const std::string_view unit = v.substr(sp + 1);
  for (std::string_view u : {"%", "W", "MiB", "MB", "GiB", "MHz", "C", "KB/s", "ms", "us"})
    if (unit == u) return true;
  return false;
}

std::vector<std::string_view> split_fields(std::string_view row) {
  std::vector<std::string_view> out;
  size_t b = 0;
  while (b <= row.size()) {
    size_t e = row.find(',', b);
    if (e == std::string_view::npos) e = row.size();
    out.push_back(text::trim(row.substr(b, e - b)));
    b = e + 1;
  }
  return out;
}

}  // namespace

namespace {

// Cheap test before splitting: an identity value must be in the row somewhere.
bool may_name_a_gpu(std::string_view row) {
  for (std::string_view m :
       {"NVIDIA", "GeForce", "Tesla", "Quadro", "TITAN", "Titan", "GRID", "GPU-", "MIG-",
        "0000:", ":00.", "A100", "H100", "H200", "B200", "L40", "A10G", "A40", "RTX"})
    if (row.find(m) != std::string_view::npos) return true;
  return false;
}

}  // namespace

std::string infer_csv_header(std::string_view row, size_t* named) {
  if (!may_name_a_gpu(row)) return {};
  const auto fields = split_fields(without_annotation(text::trim(row)));
  if (fields.size() < 3) return {};
  std::vector<std::string> cols;
  size_t identity = 0, n = 0;
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string_view v = fields[i];
    std::string col;
    if (is_gpu_name(v)) {
      col = "name";
      ++identity;
    } else if (v.size() >= 7 && v.find(':') != std::string_view::npos &&
               v.find('.') != std::string_view::npos && normalize_pci_bus_id(v)) {
      col = "pci.bus_id";
      ++identity;
    } else if (is_uuid(v)) {
      col = "uuid";
      ++identity;
    } else if (v.size() >= 2 && v.size() <= 3 && v[0] == 'P' && all_digits(v.substr(1))) {
      col = "pstate";
    } else if (is_driver_version(v)) {
      col = "driver_version";
    } else if (i == 0 && all_digits(v) && v.size() <= 3 && fields.size() > 1 &&
               is_gpu_name(fields[1])) {
      col = "index";
    } else if (!is_plain_value(v)) {
      return {};  // prose, or a value nvidia-smi does not print
    }
    if (!col.empty()) ++n;
    cols.push_back(col.empty() ? "column " + std::to_string(i + 1) : std::move(col));
  }
  if (identity == 0) return {};
  if (named) *named = n;
  std::string out;
  for (const std::string& c : cols) out += (out.empty() ? "" : ", ") + c;
  return out;
}

std::string query_header_of(std::string_view command) {
  const size_t q = command.find("--query-gpu");
  if (q == std::string_view::npos || command.find("noheader") == std::string_view::npos) return {};
  size_t b = q + 11;
  if (b < command.size() && (command[b] == '=' || command[b] == ' ')) ++b;
  size_t e = b;
  while (e < command.size() && command[e] != ' ' && command[e] != '\'' && command[e] != '"') ++e;
  std::string out;
  for (std::string_view f : split_fields(command.substr(b, e - b))) {
    if (f.empty()) return {};
    out += (out.empty() ? "" : ", ") + std::string(f);
  }
  return out;
}

bool looks_like_csv_values(std::string_view row) {
  for (std::string_view v : split_fields(without_annotation(text::trim(row))))
    if (!is_plain_value(v) && !is_gpu_name(v) && !is_uuid(v) && !is_driver_version(v) &&
        !(v.size() >= 2 && v.size() <= 3 && v[0] == 'P') && !normalize_pci_bus_id(v))
      return false;
  return true;
}

size_t csv_row_fields(std::string_view row) {
  const std::string_view bare = without_annotation(text::trim(row));
  return static_cast<size_t>(std::count(bare.begin(), bare.end(), ',')) + 1;
}

namespace {

// The row scan is the first to touch each byte of a mapped log, and the hardware prefetcher
// stops at every 4 KiB page: the text a page ahead of `at` is asked for, a cache line at a
// time (`ahead`: how far it was asked for already).
inline void prefetch_ahead(std::string_view text, size_t at, size_t& ahead) {
  for (const size_t want = std::min(text.size(), at + kPrefetchAhead); ahead < want; ahead += 64)
    __builtin_prefetch(text.data() + ahead);
}

// One data row: 0 when it was read, else its field count. A note after the row ("<= GPU is
// unusable, ...") is not a column: the row is tried again without it.
size_t read_row(CsvParser& p, std::string_view line, size_t line_no, const char* text_end,
                CsvPath path, size_t fields) {
  const bool fast = path == CsvPath::kFast;
  const size_t got =
      fast ? p.row_fast(line, line_no, text_end, fields) : p.row_reference(line, line_no);
  if (got == 0) return 0;
  const std::string_view bare = without_annotation(line);
  if (bare.size() == line.size()) return got;
  return fast ? p.row_fast(bare, line_no, text_end) : p.row_reference(bare, line_no);
}

// In a mixed file a line with no comma, one another reader claims, or a sentence ends the
// table; so does any other row of rows without a header (they were a guess).
bool ends_table(std::string_view line, size_t got, bool given, const CsvStopFn* is_other) {
  return is_other && (got == 1 || given || (*is_other)(line) || !smi::looks_like_csv_values(line));
}

}  // namespace

Result<size_t> parse_smi_csv_block(std::string_view text, std::string_view origin,
                                   const SnapshotSink& sink, std::vector<Error>* errors,
                                   CsvPath path, const CsvStopFn* is_other, CsvBlockInfo* info) {
  CsvParser p(origin, sink, errors);
  text = text::strip_bom(text);
  const char* text_end = text.data() + text.size();
  text::LineReader rd(text);
  std::string_view line;
  const bool given = info && !info->header.empty();
  bool have_header = false;
  if (given) {
    if (auto st = p.header(info->header, 0, true); !st) return st.error();
    have_header = true;
  }
  size_t last_end = 0, last_line = 0, fields = 0, ahead = 0;
  const auto taken = [&] {  // the block reaches this far
    last_end = rd.offset();
    last_line = rd.line_no();
  };
  constexpr size_t kProgressStep = size_t{1} << 20;
  size_t next_report = info && info->on_progress ? kProgressStep : std::string_view::npos;
  while (true) {
    if (rd.offset() >= next_report) {
      info->on_progress(p.read_behind(text.data(), rd.offset()));
      next_report = rd.offset() + kProgressStep;
    }
    // Past the header the fast path finds a row's end and its commas in one pass.
    fields = 0;
    if (path == CsvPath::kFast && have_header) {
      if (rd.offset() >= text.size()) break;
      prefetch_ahead(text, rd.offset(), ahead);
      size_t len = 0;
      fields = p.scan_row(text.data() + rd.offset(), text_end, len);
      rd.take(len, line);
    } else if (!rd.next(line)) {
      break;
    }
    // A blank line is skipped; a row starts with its first field's text (trimmed only then).
    if (line.empty() || (text::is_space(line.front()) && text::trim(line).empty())) continue;
    if (!have_header) {
      if (auto st = p.header(line, rd.line_no()); !st) return st.error();
      have_header = true;
    } else if (line == p.header_line()) {  // a repeated header (appended logs) is skipped
    } else if (const size_t got = read_row(p, line, rd.line_no(), text_end, path, fields);
               got == 0) {
      if (info) ++info->rows;
    } else if (text::is_elision_line(text::trim(line))) {  // "[...]" left by whoever pasted the log
      if (info) ++info->elided;
    } else if (ends_table(line, got, given, is_other)) {
      if (info) {
        info->end = last_end;
        info->end_line = last_line;
      }
      return p.finish();
    } else {
      p.row_error(rd.line_no(), got);
      if (info) ++info->bad_rows;
    }
    taken();
  }
  if (!have_header) {
    return make_error("capture.smi_csv", "expected a CSV header line, found no text",
                      std::string(origin) + ":1");
  }
  if (info) {
    info->end = is_other ? last_end : text.size();
    info->end_line = last_line;
  }
  return p.finish();
}

}  // namespace smi

Result<size_t> parse_smi_csv(std::string_view text, std::string_view origin,
                             const SnapshotSink& sink, std::vector<Error>* errors) {
  return smi::parse_smi_csv_path(text, origin, sink, errors, CsvPath::kFast);
}

std::vector<Snapshot> collect_smi_csv(std::string_view text, std::string_view origin,
                                      std::vector<Error>* errors) {
  std::vector<Snapshot> out;
  auto r = parse_smi_csv(
      text, origin, [&](const Snapshot& s, bool) { out.push_back(s); }, errors);
  if (!r && errors) errors->push_back(r.error());
  return out;
}

}  // namespace gw
