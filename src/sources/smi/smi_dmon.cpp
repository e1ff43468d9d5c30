// nvidia-smi dmon: '#'-prefixed header (names) and units lines, then whitespace-separated
// rows, one per GPU per interval; "-" means not supported. The header may repeat.
#include <string>
#include <vector>

#include "sources/smi/model_util.h"
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

std::optional<unsigned> as_unsigned(std::string_view v) {
  return text::to_unsigned(text::parse_u64(v));
}

void apply(DCol c, std::string_view v, GpuState& g) {
  GpuSample& s = g.sample;
  switch (c) {
    case DCol::kGpu:
      g.info.index = as_unsigned(v).value_or(0);
      break;
    case DCol::kPwr:
      s.power_mw = text::parse_watts_mw(v);
      break;
    case DCol::kGtemp:
      s.temp_c = text::to_int(text::parse_i64(v));
      break;
    case DCol::kMtemp:
      s.mem_temp_c = text::to_int(text::parse_i64(v));
      break;
    case DCol::kSm:
      s.util_gpu_pct = as_unsigned(v);
      break;
    case DCol::kMem:
      s.util_mem_pct = as_unsigned(v);
      break;
    case DCol::kEnc:
      s.util_enc_pct = as_unsigned(v);
      break;
    case DCol::kDec:
      s.util_dec_pct = as_unsigned(v);
      break;
    case DCol::kMclk:
      s.mem_clock_mhz = as_unsigned(v);
      break;
    case DCol::kPclk:  // dmon's processor clock: the graphics/SM clock
      s.graphics_clock_mhz = as_unsigned(v);
      s.sm_clock_mhz = s.graphics_clock_mhz;
      break;
    case DCol::kFb:
      s.mem_used_bytes = text::parse_mem_bytes(v);
      break;
    case DCol::kRxPci:
      if (const auto u = as_unsigned(v)) s.pcie_rx_kb_s = uint64_t{*u} * 1024;
      break;
    case DCol::kTxPci:
      if (const auto u = as_unsigned(v)) s.pcie_tx_kb_s = uint64_t{*u} * 1024;
      break;
    // -s e: aggregate (lifetime) single/double-bit ECC counts, as nvidia-smi(1) describes
    // dmon's ECC metrics, and the PCIe replay counter ("-": not supported).
    case DCol::kSbEcc:
      s.ecc_sbe_aggregate = text::parse_u64(v);
      break;
    case DCol::kDbEcc:
      s.ecc_dbe_aggregate = text::parse_u64(v);
      break;
    case DCol::kPciReplay:
      s.pcie_replays = text::parse_u64(v);
      break;
    default:
      break;
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

struct DmonState {
  std::vector<DCol> cols;
  std::vector<std::string_view> f;
  Snapshot cur;
  std::vector<unsigned> seen;
  size_t emitted = 0;
};

void emit(DmonState& st, const SnapshotSink& sink, bool last = false) {
  if (st.cur.gpus.empty()) return;
  for (auto& g : st.cur.gpus) smi::derive_capabilities(g);
  sink(st.cur, last);
  ++st.emitted;
  st.cur.gpus.clear();
  st.seen.clear();
}

void dmon_row(DmonState& st, const SnapshotSink& sink) {
  GpuState g;
  std::string_view date, time;
  for (size_t i = 0; i < st.cols.size(); ++i) {
    if (st.cols[i] == DCol::kDate)
      date = st.f[i];
    else if (st.cols[i] == DCol::kTime)
      time = st.f[i];
    else
      apply(st.cols[i], st.f[i], g);
  }
  for (unsigned idx : st.seen)
    if (idx == g.info.index) {
      emit(st, sink);
      break;
    }
  if (st.cur.gpus.empty()) st.cur.time_ms = dmon_time(date, time).value_or(0);
  st.seen.push_back(g.info.index);
  st.cur.gpus.push_back(std::move(g));
}

}  // namespace

Result<size_t> parse_smi_dmon(std::string_view text, std::string_view origin,
                              const SnapshotSink& sink, std::vector<Error>* errors) {
  DmonState st;
  st.cur.source = "smi-dmon:" + std::string(origin);
  text::LineReader rd(text::strip_bom(text));
  std::string_view line;
  while (rd.next(line)) {
    const std::string_view t = text::trim(line);
    if (t.empty()) continue;
    // Only an error names its line: a string per row was a tenth of a long log's time.
    const auto where = [&] { return std::string(origin) + ":" + std::to_string(rd.line_no()); };
    if (t.front() == '#') {
      text::split_words_any_space(t.substr(1), st.f);
      if (!st.f.empty() && dmon_col(st.f.front()) != DCol::kIgnore && st.f.front() != "Idx") {
        st.cols.clear();
        for (auto n : st.f) st.cols.push_back(dmon_col(n));
      }
      continue;
    }
    if (st.cols.empty())
      return make_error("capture.smi_dmon", "expected a '# gpu pwr ...' header line before data",
                        where());
    text::split_words_any_space(t, st.f);
    if (st.f.size() != st.cols.size()) {
      if (errors)
        errors->push_back(make_error("capture.smi_dmon",
                                     "expected " + std::to_string(st.cols.size()) +
                                         " columns as in the header, got " +
                                         std::to_string(st.f.size()) + "; row skipped",
                                     where()));
      continue;
    }
    dmon_row(st, sink);
  }
  emit(st, sink, true);
  if (st.cols.empty())
    return make_error("capture.smi_dmon", "expected a '# gpu pwr ...' header line",
                      std::string(origin) + ":1");
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
