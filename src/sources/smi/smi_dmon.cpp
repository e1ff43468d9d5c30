// nvidia-smi dmon: '#'-prefixed header (names) and units lines, then whitespace-separated
// rows, one per GPU per interval; "-" means not supported. The header may repeat.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sources/smi/model_util.h"
#include "sources/smi/smi_csv_fast.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw {

namespace {

enum class DCol {
  kIgnore,
  kGpu,
  kPwr,
  kGtemp,
  kMtemp,
  kSm,
  kMem,
  kEnc,
  kDec,
  kMclk,
  kPclk,
  kFb,
  kRxPci,
  kTxPci,
  kSbEcc,
  kDbEcc,
  kPciReplay,
  kDate,
  kTime
};

DCol dmon_col(std::string_view n) {
  struct M {
    std::string_view name;
    DCol col;
  };
  static constexpr M kMap[] = {
      // "temp": dmon before gtemp/mtemp (R400-era -s p) named the GPU temperature so.
      {"gpu", DCol::kGpu},       {"pwr", DCol::kPwr},     {"gtemp", DCol::kGtemp},
      {"temp", DCol::kGtemp},    {"sbecc", DCol::kSbEcc}, {"dbecc", DCol::kDbEcc},
      {"pci", DCol::kPciReplay}, {"mtemp", DCol::kMtemp}, {"sm", DCol::kSm},
      {"mem", DCol::kMem},       {"enc", DCol::kEnc},     {"dec", DCol::kDec},
      {"mclk", DCol::kMclk},     {"pclk", DCol::kPclk},   {"fb", DCol::kFb},
      {"rxpci", DCol::kRxPci},   {"txpci", DCol::kTxPci}, {"date", DCol::kDate},
      {"time", DCol::kTime}};
  for (const auto& m : kMap)
    if (text::iequals(n, m.name)) return m.col;
  return DCol::kIgnore;
}

// Each cell through smi_csv_fast.h's parsers: drop-ins for text_util's (a cell is a trimmed
// word), as fast on every row of a week-long log as the CSV's. Every column writes its slot
// whatever the cell holds: a GpuState is reused from row to row (DmonState). Returns whether a
// value went from unknown to known or back, which is all the GPU's capabilities are made of.
[[gnu::always_inline]] inline bool apply(DCol c, std::string_view v, GpuState& g) {
  namespace fast = smi::fast;
  using fast::detail::set;
  GpuSample& s = g.sample;
  switch (c) {
    case DCol::kGpu:  // read before (dmon_row)
      return false;
    case DCol::kPwr:
      return fast::put_watts_mw(s.power_mw, v);
    case DCol::kGtemp:
      return fast::put_int(s.temp_c, v);
    case DCol::kMtemp:
      return fast::put_int(s.mem_temp_c, v);
    case DCol::kSm:
      return fast::put_unsigned(s.util_gpu_pct, v);
    case DCol::kMem:
      return fast::put_unsigned(s.util_mem_pct, v);
    case DCol::kEnc:
      return fast::put_unsigned(s.util_enc_pct, v);
    case DCol::kDec:
      return fast::put_unsigned(s.util_dec_pct, v);
    case DCol::kMclk:
      return fast::put_unsigned(s.mem_clock_mhz, v);
    case DCol::kPclk:  // dmon's processor clock: the graphics/SM clock
    {
      const bool changed = fast::put_unsigned(s.graphics_clock_mhz, v);
      // Known exactly when the graphics clock is. Flag and value apart: the optional copied
      // whole was one 8-byte load of the two stores just made, which cannot be forwarded.
      if (s.graphics_clock_mhz.has_value())
        s.sm_clock_mhz = *s.graphics_clock_mhz;
      else
        s.sm_clock_mhz.reset();
      return changed;
    }
    case DCol::kFb:
      return fast::put_mem_bytes(s.mem_used_bytes, v);
    case DCol::kRxPci:
    case DCol::kTxPci: {
      std::optional<unsigned> u;
      fast::put_unsigned(u, v);
      auto& slot = c == DCol::kRxPci ? s.pcie_rx_kb_s : s.pcie_tx_kb_s;
      return u ? set(slot, uint64_t{*u} * 1024) : set(slot, std::nullopt);
    }
    // -s e: aggregate (lifetime) single/double-bit ECC counts, as nvidia-smi(1) describes
    // dmon's ECC metrics, and the PCIe replay counter ("-": not supported).
    case DCol::kSbEcc:
      return set(s.ecc_sbe_aggregate, text::parse_u64(v));
    case DCol::kDbEcc:
      return set(s.ecc_dbe_aggregate, text::parse_u64(v));
    case DCol::kPciReplay:
      return set(s.pcie_replays, text::parse_u64(v));
    default:
      return false;
  }
}

// "20250101" "10:00:00" (dmon -o DT) -> epoch ms.
std::optional<int64_t> dmon_time(std::string_view date, std::string_view time) {
  if (date.size() != 8 || time.size() < 8) return std::nullopt;
  auto num = [](std::string_view s) { return text::parse_u64(s).value_or(0); };
  const auto y = num(date.substr(0, 4)), m = num(date.substr(4, 2)), d = num(date.substr(6, 2));
  if (m < 1 || m > 12 || d < 1 || d > 31) return std::nullopt;
  const int64_t days = text::days_from_civil(static_cast<int64_t>(y), static_cast<unsigned>(m),
                                             static_cast<unsigned>(d));
  const auto hh = num(time.substr(0, 2)), mm = num(time.substr(3, 2)), ss = num(time.substr(6, 2));
  return ((days * 24 + static_cast<int64_t>(hh)) * 60 + static_cast<int64_t>(mm)) * 60000 +
         static_cast<int64_t>(ss) * 1000;
}

// An interval's rows fill cur.gpus[0, n); past n are GpuStates kept from earlier intervals to be
// filled again (building and destroying one per row was a tenth of a long log's time). A slot
// filled under another header is reset first: its old columns' values would stay otherwise.
struct DmonState {
  std::vector<DCol> cols;
  int gpu_col = -1, date_col = -1, time_col = -1;  // the last such column, as applied in order
  std::vector<std::string_view> f;
  Snapshot cur;
  size_t n = 0;
  // Beside each of cur.gpus: the header (count) it was last filled under, and whether its
  // capabilities need deriving again, a value of it having gone from unknown to known or back
  // (deriving them for every row was a twentieth of the time).
  struct Slot {
    unsigned header = 0;
    bool caps_stale = true;
  };
  std::vector<Slot> slots;
  unsigned header = 0;
  size_t emitted = 0;

  void take_header(std::vector<DCol> c) {
    if (c == cols) return;  // dmon repeats its header every few intervals
    cols = std::move(c);
    ++header;
    gpu_col = date_col = time_col = -1;
    for (size_t i = 0; i < cols.size(); ++i) {
      const int at = static_cast<int>(i);
      if (cols[i] == DCol::kGpu) gpu_col = at;
      if (cols[i] == DCol::kDate) date_col = at;
      if (cols[i] == DCol::kTime) time_col = at;
    }
  }
  std::string_view cell(int at) const {
    return at >= 0 ? f[static_cast<size_t>(at)] : std::string_view();
  }
  GpuState& next_slot() {
    if (n == cur.gpus.size()) {
      cur.gpus.emplace_back();
      slots.push_back({header, true});
    } else if (slots[n].header != header) {
      cur.gpus[n] = GpuState{};
      slots[n] = {header, true};
    }
    return cur.gpus[n++];
  }
};

void emit(DmonState& st, const SnapshotSink& sink, bool last = false) {
  if (st.n == 0) return;
  st.cur.gpus.resize(st.n);
  st.slots.resize(st.n);
  for (size_t i = 0; i < st.n; ++i)
    if (std::exchange(st.slots[i].caps_stale, false)) smi::derive_capabilities(st.cur.gpus[i]);
  sink(st.cur, last);
  ++st.emitted;
  st.n = 0;
}

// The GpuState a row of GPU `index` fills: a GPU the interval has already starts the next one.
GpuState& start_row(DmonState& st, const SnapshotSink& sink, std::string_view index_cell) {
  std::optional<unsigned> index_read;
  smi::fast::put_unsigned(index_read, index_cell);
  const unsigned index = index_read.value_or(0);
  for (size_t i = 0; i < st.n; ++i)
    if (st.cur.gpus[i].info.index == index) {
      emit(st, sink);
      break;
    }
  if (st.n == 0) st.cur.time_ms = dmon_time(st.cell(st.date_col), st.cell(st.time_col)).value_or(0);
  GpuState& g = st.next_slot();
  g.info.index = index;
  return g;
}

void dmon_row(DmonState& st, const SnapshotSink& sink) {
  GpuState& g = start_row(st, sink, st.cell(st.gpu_col));
  bool caps = false;
  for (size_t i = 0; i < st.cols.size(); ++i) caps |= apply(st.cols[i], st.f[i], g);
  if (caps) st.slots[st.n - 1].caps_stale = true;
}

// One line of a dmon block, trimmed and not empty; `where` names it. False after an error that
// ends the reading (a row before any header).
bool dmon_line(DmonState& st, std::string_view t, const std::function<std::string()>& where,
               const SnapshotSink& sink, std::vector<Error>* errors, std::optional<Error>& fatal) {
  if (t.front() == '#') {
    text::split_words_any_space(t.substr(1), st.f);
    if (!st.f.empty() && dmon_col(st.f.front()) != DCol::kIgnore && st.f.front() != "Idx") {
      std::vector<DCol> cols;
      for (auto n : st.f) cols.push_back(dmon_col(n));
      st.take_header(std::move(cols));
    }
    return true;
  }
  if (st.cols.empty()) {
    fatal = make_error("capture.smi_dmon", "expected a '# gpu pwr ...' header line before data",
                       where());
    return false;
  }
  text::split_words_any_space(t, st.f);
  if (st.f.size() != st.cols.size()) {
    if (errors)
      errors->push_back(make_error("capture.smi_dmon",
                                   "expected " + std::to_string(st.cols.size()) +
                                       " columns as in the header, got " +
                                       std::to_string(st.f.size()) + "; row skipped",
                                   where()));
    return true;
  }
  dmon_row(st, sink);
  return true;
}

// dmon_line for the row at p ("    0    214     46 ..."), its words and its end found in one
// pass (text::line_words_any_space): the bytes it took with its '\n', or 0 for a row it leaves
// to dmon_line (no header yet, other than the header's count of columns, 128 bytes not left).
size_t dmon_row_at(DmonState& st, const char* p, size_t left, const SnapshotSink& sink) {
  text::RowWords found;
  size_t nl = 0, len = 0;
  if (st.cols.empty() || left < 128 || !text::line_words_any_space(p, found, nl, len)) return 0;
  text::RowWords w = found;  // a copy whose address is not taken: kept in registers
  const size_t n = st.cols.size();
  if (static_cast<size_t>(__builtin_popcountll(w.starts0) + __builtin_popcountll(w.starts1)) != n)
    return 0;
  size_t b = 0, e = 0;
  w.next(b, e);
  // The block's row test (smi_dmon_line): the first word's digits, then a blank or the row's end.
  if (e != len && p[e] != ' ' && p[e] != '\t') return 0;
  for (size_t k = b; k < e; ++k)
    if (!text::is_digit(p[k])) return 0;
  const std::string_view first(p + b, e - b);
  if (st.gpu_col != 0 || st.date_col >= 0 || st.time_col >= 0) {  // other cells read first
    st.f.resize(n);
    st.f[0] = first;
    for (size_t i = 1; i < n && w.next(b, e); ++i) st.f[i] = std::string_view(p + b, e - b);
    dmon_row(st, sink);
    return nl + 1;
  }
  // The GPU's index first, as dmon prints it: each cell applied as its word is found.
  GpuState& g = start_row(st, sink, first);
  bool caps = false;
  const DCol* cols = st.cols.data();
  for (size_t i = 1; i < n && w.next(b, e); ++i)
    caps |= apply(cols[i], std::string_view(p + b, e - b), g);
  if (caps) st.slots[st.n - 1].caps_stale = true;
  return nl + 1;
}

}  // namespace

bool smi_dmon_line(std::string_view t) {
  if (t.front() == '#') return true;
  size_t i = 0;
  while (i < t.size() && text::is_digit(t[i])) ++i;
  return i > 0 && (i == t.size() || t[i] == ' ' || t[i] == '\t');
}

Result<size_t> parse_smi_dmon(std::string_view text, std::string_view origin,
                              const SnapshotSink& sink, std::vector<Error>* errors) {
  DmonState st;
  st.cur.source = "smi-dmon:" + std::string(origin);
  text::LineReader rd(text::strip_bom(text));
  std::string_view line;
  std::optional<Error> fatal;
  // Only an error names its line: a string per row was a tenth of a long log's time.
  const std::function<std::string()> where = [&] {
    return std::string(origin) + ":" + std::to_string(rd.line_no());
  };
  while (rd.next(line)) {
    const std::string_view t = text::trim(line);
    if (!t.empty() && !dmon_line(st, t, where, sink, errors, fatal)) return *fatal;
  }
  emit(st, sink, true);
  if (st.cols.empty())
    return make_error("capture.smi_dmon", "expected a '# gpu pwr ...' header line",
                      std::string(origin) + ":1");
  return st.emitted;
}

Result<size_t> parse_smi_dmon_at(std::string_view text, size_t begin, size_t first_line,
                                 const text::BlockLimits& limits, std::string_view origin,
                                 const SnapshotSink& sink, std::vector<Error>* errors,
                                 text::BlockStop& stop) {
  DmonState st;
  st.cur.source = "smi-dmon:" + std::string(origin);
  std::optional<Error> fatal;
  size_t at = first_line;
  const std::function<std::string()> where = [&] {
    return std::string(origin) + ":" + std::to_string(at);
  };
  text::walk_block(
      text, begin, first_line, limits,
      [&](const char* p, size_t left, size_t) {
        return fatal ? 0 : dmon_row_at(st, p, left, sink);
      },
      smi_dmon_line,
      [&](std::string_view t, size_t no) {
        at = no;
        if (!fatal) dmon_line(st, t, where, sink, errors, fatal);
      },
      stop);
  if (fatal) return *fatal;
  emit(st, sink, true);
  if (st.cols.empty())
    return make_error("capture.smi_dmon", "expected a '# gpu pwr ...' header line",
                      std::string(origin) + ":" + std::to_string(first_line));
  return st.emitted;
}

std::vector<Snapshot> collect_smi_dmon(std::string_view text, std::string_view origin,
                                       std::vector<Error>* errors) {
  std::vector<Snapshot> out;
  auto r = parse_smi_dmon(
      text, origin, [&](const Snapshot& s, bool) { out.push_back(s); }, errors);
  if (!r && errors) errors->push_back(r.error());
  return out;
}

}  // namespace gw
