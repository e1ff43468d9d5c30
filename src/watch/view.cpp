#include "watch/view.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/clock_words.h"

namespace gw::watch {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string short_name(const std::string& name) {
  std::string n = name.rfind("NVIDIA ", 0) == 0 ? name.substr(7) : name;
  return n.size() > 14 ? n.substr(0, 14) : n;
}

std::vector<Finding> active_findings(const Frame& f) {
  std::vector<Finding> out;
  for (const WatchFinding& w : f.findings)
    if (w.active) out.push_back(w.finding);
  return out;
}

void fill_temp(GpuRow& r, const GpuState& g) {
  const auto& t = g.sample.temp_c;
  const auto& sd = g.info.temp_slowdown_c;
  const auto& sh = g.info.temp_shutdown_c;
  r.temp = t ? fmt::format("{}C", *t) : "-";
  if (sd || sh)
    r.temp += fmt::format("/{}/{}", sd ? std::to_string(*sd) : "-", sh ? std::to_string(*sh) : "-");
  if (t && sd && *t >= *sd)
    r.temp_tone = Tone::kBad;
  else if (t && sd && *t >= *sd - 5)
    r.temp_tone = Tone::kWarn;
}

void fill_power_clock(GpuRow& r, const GpuState& g) {
  const GpuSample& s = g.sample;
  r.power = s.power_mw ? fmt::format("{}", *s.power_mw / 1000) : "-";
  if (s.power_limit_mw)
    r.power += fmt::format("/{}W", *s.power_limit_mw / 1000);
  else if (s.power_mw)
    r.power += "W";
  if ((s.clock_reasons.value_or(0) & clock_reason::kSwPowerCap) != 0) r.power_tone = Tone::kWarn;
  r.clock = s.sm_clock_mhz ? std::to_string(*s.sm_clock_mhz) : "-";
  if (g.info.max_sm_clock_mhz) r.clock += "/" + std::to_string(*g.info.max_sm_clock_mhz);
  if (s.sm_clock_mhz && g.info.max_sm_clock_mhz && s.util_gpu_pct.value_or(0) >= 10 &&
      *s.sm_clock_mhz * 10 < *g.info.max_sm_clock_mhz * 7)
    r.clock_tone = Tone::kWarn;
}

void fill_pcie(GpuRow& r, const GpuState& g) {
  const GpuSample& s = g.sample;
  const auto link = [](std::optional<unsigned> gen, std::optional<unsigned> width) {
    return (gen ? std::to_string(*gen) : "-") + "x" + (width ? std::to_string(*width) : "-");
  };
  r.pcie = link(s.pcie_gen, s.pcie_width) + "/" + link(g.info.pcie_max_gen, g.info.pcie_max_width);
  const bool below =
      (s.pcie_gen && g.info.pcie_max_gen && *s.pcie_gen < *g.info.pcie_max_gen) ||
      (s.pcie_width && g.info.pcie_max_width && *s.pcie_width < *g.info.pcie_max_width);
  // Idle GPUs lower their link on purpose; only a busy GPU's slow link is worth a colour.
  if (below && s.util_gpu_pct.value_or(0) >= 10) r.pcie_tone = Tone::kWarn;
}

int severity_rank(const GpuRow& r) {
  return static_cast<int>(r.verdict.level);
}

}  // namespace

std::string_view sort_name(SortKey k) {
  switch (k) {
    case SortKey::kIndex:
      return "index";
    case SortKey::kHealth:
      return "health";
    case SortKey::kUtil:
      return "util";
    case SortKey::kTemp:
      return "temp";
    case SortKey::kPower:
      return "power";
    case SortKey::kMemory:
      return "memory";
  }
  return "index";
}

GpuRow gpu_row(const Frame& frame, size_t i) {
  const GpuState& g = frame.snapshot.gpus[i];
  const GpuSample& s = g.sample;
  GpuRow r;
  r.index = static_cast<unsigned>(i);
  r.name = short_name(g.info.name);
  const auto active = active_findings(frame);
  r.verdict = gpu_verdict(r.index, g, active);
  if (g.access != GpuAccess::kOk) {
    r.util = r.mem = r.temp = r.power = r.clock = r.pcie = "-";
    r.util = "LOST";
    if (g.access != GpuAccess::kLost) r.util = std::string(gpu_access_name(g.access)).substr(0, 5);
    r.util_tone = Tone::kBad;
    return r;
  }
  r.util = s.util_gpu_pct ? fmt::format("{}%", *s.util_gpu_pct) : "-";
  const auto total = s.mem_total_bytes ? s.mem_total_bytes : g.info.mem_total_bytes;
  r.mem = s.mem_used_bytes && total
              ? fmt::format("{:.0f}/{:.0f}G", static_cast<double>(*s.mem_used_bytes) / kGiB,
                            static_cast<double>(*total) / kGiB)
              : "-";
  fill_temp(r, g);
  fill_power_clock(r, g);
  fill_pcie(r, g);
  for (const std::string& w : clock_reason_words(s.clock_reasons.value_or(0) & kMarkedClockReasons))
    r.throttle += (r.throttle.empty() ? "" : ", ") + w;
  return r;
}

std::vector<size_t> sorted_gpus(const Frame& frame, SortKey key) {
  std::vector<size_t> order(frame.snapshot.gpus.size());
  std::vector<GpuRow> rows;
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
    rows.push_back(gpu_row(frame, i));
  }
  const auto metric = [&](size_t i) -> double {
    const GpuSample& s = frame.snapshot.gpus[i].sample;
    switch (key) {
      case SortKey::kHealth:
        return severity_rank(rows[i]);
      case SortKey::kUtil:
        return s.util_gpu_pct.value_or(0);
      case SortKey::kTemp:
        return s.temp_c.value_or(-1000);
      case SortKey::kPower:
        return s.power_mw.value_or(0);
      case SortKey::kMemory:
        return static_cast<double>(s.mem_used_bytes.value_or(0));
      case SortKey::kIndex:
        break;
    }
    return -static_cast<double>(i);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return metric(a) > metric(b); });
  return order;
}

bool handle_key(UiState& ui, int key, size_t gpu_count) {
  const size_t last = gpu_count == 0 ? 0 : gpu_count - 1;
  if (ui.help && key != 'q') {
    ui.help = false;
    return false;
  }
  switch (key) {
    case 'q':
      ui.quit = true;
      return false;
    case '?':
    case 'h':
      ui.help = true;
      return false;
    case 'p':
    case ' ':
      ui.paused = !ui.paused;
      return false;
    case kKeyUp:
    case 'k':
      if (ui.detail)
        ui.detail_scroll = std::max(0, ui.detail_scroll - 1);
      else if (ui.selected > 0)
        --ui.selected;
      return false;
    case kKeyDown:
    case 'j':
      if (ui.detail)
        ++ui.detail_scroll;
      else
        ui.selected = std::min(ui.selected + 1, last);
      return false;
    case kKeyEnter:
    case '\r':
      ui.detail = !ui.detail;
      ui.detail_scroll = 0;
      return false;
    case kKeyEscape:
    case 0407:
    case 127:
      ui.detail = false;
      return false;
    case 's':
      ui.sort = static_cast<SortKey>((static_cast<int>(ui.sort) + 1) % 6);
      return false;
    case 'z':
      ui.span = (ui.span + 1) % std::size(kSpans);
      return true;
    case '[':
    case kKeyLeft:
      ui.back_ms += ui.span_ms();
      return true;
    case ']':
    case kKeyRight:
      ui.back_ms = std::max<int64_t>(0, ui.back_ms - ui.span_ms());
      return true;
    case 'l':
      ui.back_ms = 0;
      return true;
    default:
      return false;
  }
}

std::vector<std::string> sparkline(const std::vector<Point>& values, const GpuHistory* marks,
                                   int64_t from_ms, int64_t to_ms, int width, double lo, double hi,
                                   bool unicode) {
  static constexpr std::array<const char*, 8> kBlocks = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  static constexpr std::array<const char*, 8> kAscii = {"_", ".", "-", "~", "=", "+", "*", "#"};
  std::vector<std::string> out(static_cast<size_t>(std::max(width, 0)), " ");
  if (width <= 0 || to_ms <= from_ms) return out;
  const auto column = [&](int64_t t) -> int {
    if (t < from_ms || t >= to_ms) return -1;
    return static_cast<int>((t - from_ms) * width / (to_ms - from_ms));
  };
  std::vector<double> peak(out.size(), -1e300);
  for (const Point& p : values)
    if (int c = column(p.t_ms); c >= 0)
      peak[static_cast<size_t>(c)] = std::max(peak[static_cast<size_t>(c)], p.value);
  for (size_t c = 0; c < out.size(); ++c) {
    if (peak[c] == -1e300) continue;
    const double f = hi > lo ? std::clamp((peak[c] - lo) / (hi - lo), 0.0, 1.0) : 0.0;
    const size_t level = static_cast<size_t>(f * 7.0 + 0.5);
    out[c] = unicode ? kBlocks[level] : kAscii[level];
  }
  if (marks == nullptr) return out;
  for (int64_t t : marks->throttle_ms)
    if (int c = column(t); c >= 0) out[static_cast<size_t>(c)] = "!";
  for (int64_t t : marks->xid_ms)
    if (int c = column(t); c >= 0) out[static_cast<size_t>(c)] = "X";
  return out;
}

}  // namespace gw::watch
