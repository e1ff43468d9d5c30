// The screen layout: list of GPUs (two lines each when there is room), active findings, key
// line; the detail page of one GPU; the help box. Pure over (Frame, UiState, size).
#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "watch/view.h"

namespace gw::watch {
namespace {

struct Line {
  std::string text;
  Tone tone = Tone::kNormal;
};

constexpr int kNameCol = 5, kUtilCol = 20, kMemCol = 26, kTempCol = 36, kPowerCol = 48,
              kClockCol = 58, kPcieCol = 68;

std::string clock_text(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:02}:{:02}:{:02}Z", tm.tm_hour, tm.tm_min, tm.tm_sec);
}

std::string span_text(int64_t ms) {
  return ms >= 3600'000 ? fmt::format("{}h", ms / 3600'000) : fmt::format("{}m", ms / 60'000);
}

std::string_view severity_tag(Severity s) {
  return s == Severity::kCritical ? "CRIT" : s == Severity::kWarning ? "WARN" : "info";
}

Tone severity_tone(Severity s) {
  return s == Severity::kCritical ? Tone::kBad : s == Severity::kWarning ? Tone::kWarn : Tone::kDim;
}

Tone level_tone(GpuLevel l) {
  return l == GpuLevel::kOk ? Tone::kGood : l == GpuLevel::kWarn ? Tone::kWarn : Tone::kBad;
}

// Words wrapped to `width`, each continuation indented by `indent`.
std::vector<std::string> wrap(const std::string& text, int width, int indent) {
  std::vector<std::string> out;
  std::string cur;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(' ', i);
    if (j == std::string::npos) j = text.size();
    const std::string word = text.substr(i, j - i);
    if (!cur.empty() && static_cast<int>(cur.size() + 1 + word.size()) > width) {
      out.push_back(cur);
      cur = std::string(static_cast<size_t>(indent), ' ');
    }
    cur += (cur.empty() || cur.back() == ' ' ? "" : " ") + word;
    i = j + 1;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

void header(Grid& g, const Frame& f, const UiState& ui) {
  std::string left = "gpuwarden watch  " + f.snapshot.hostname.value_or("") + "  " +
                     clock_text(f.now_ms) + "  " + f.source;
  g.put(0, 0, left, Tone::kTitle);
  std::string right = ui.paused ? " PAUSED" : "";
  if (ui.back_ms > 0) right += " history -" + span_text(ui.back_ms);
  if (f.error) right = " ! " + *f.error + right;
  g.put(0, std::max(0, g.cols() - static_cast<int>(right.size())), right,
        f.error ? Tone::kBad : Tone::kWarn);
}

void column_titles(Grid& g, int row) {
  g.put(row, 0, " GPU");
  g.put(row, kNameCol, "NAME");
  g.put(row, kUtilCol, "UTIL");
  g.put(row, kMemCol, "MEM");
  g.put(row, kTempCol, "TEMP/SD/SH");
  g.put(row, kPowerCol, "POWER/LIM");
  g.put(row, kClockCol, "SM/MAX");
  g.put(row, kPcieCol, "PCIE NOW/MAX");
  for (int c = 0; c < g.cols(); ++c) g.at(row, c).tone = Tone::kTitle;
}

void gpu_line(Grid& g, int row, const GpuRow& r, bool selected) {
  g.put(row, 0, selected ? ">" : " ", Tone::kSelected);
  g.put(row, 1, fmt::format("{:>2}", r.index), level_tone(r.verdict.level));
  g.put(row, kNameCol, r.name);
  g.put(row, kUtilCol, r.util, r.util_tone);
  g.put(row, kMemCol, r.mem);
  g.put(row, kTempCol, r.temp, r.temp_tone);
  g.put(row, kPowerCol, r.power, r.power_tone);
  g.put(row, kClockCol, r.clock, r.clock_tone);
  g.put(row, kPcieCol, r.pcie, r.pcie_tone);
  if (selected)
    for (int c = 1; c < g.cols(); ++c)
      if (g.at(row, c).tone == Tone::kNormal) g.at(row, c).tone = Tone::kSelected;
}

int put_spark(Grid& g, int row, int col, const std::vector<std::string>& cells, Tone tone) {
  for (const std::string& s : cells)
    col = g.put(row, col, s, s == "X" ? Tone::kBad : s == "!" ? Tone::kWarn : tone);
  return col;
}

void history_line(Grid& g, int row, const Frame& f, const GpuRow& r, const ViewOptions& o) {
  const auto it = f.history.find(r.index);
  const GpuHistory* h = it == f.history.end() ? nullptr : &it->second;
  const int w = std::clamp((g.cols() - 69) / 2, 8, 30);  // leaves 55+ columns for the reason
  const GpuState& gs = f.snapshot.gpus[r.index];
  int col = g.put(row, kNameCol, "u", Tone::kDim);
  col = put_spark(g, row, col,
                  sparkline(h ? h->util_pct : std::vector<Point>{}, h, f.history_from_ms,
                            f.history_to_ms, w, 0, 100, o.unicode),
                  Tone::kGood);
  col = g.put(row, col + 1, "t", Tone::kDim);
  const double hot = gs.info.temp_shutdown_c.value_or(95);
  col = put_spark(g, row, col,
                  sparkline(h ? h->temp_c : std::vector<Point>{}, nullptr, f.history_from_ms,
                            f.history_to_ms, w, 20, hot, o.unicode),
                  Tone::kNormal);
  // The slowdown reasons in words come first: they are what a person asks "why slow?" for.
  if (!r.throttle.empty() && r.verdict.level != GpuLevel::kLost) {
    col = g.put(row, col + 1, r.throttle, Tone::kWarn);
    if (r.verdict.reason.empty() || r.verdict.reason == r.throttle) return;
    g.put(row, col, " | " + r.verdict.reason, level_tone(r.verdict.level));
    return;
  }
  g.put(row, col + 1, r.verdict.reason.empty() ? "ok" : r.verdict.reason,
        level_tone(r.verdict.level));
}

void findings_block(Grid& g, int row, int last_row, const Frame& f) {
  size_t active = 0;
  for (const WatchFinding& w : f.findings) active += w.active ? 1 : 0;
  g.put(row++, 0, fmt::format("FINDINGS  {} active", active), Tone::kTitle);
  for (const WatchFinding& w : f.findings) {
    if (!w.active) continue;
    if (row > last_row) break;
    const Finding& x = w.finding;
    const std::string gpu = x.gpu ? fmt::format("GPU {}", *x.gpu) : "host ";
    int col = g.put(row, 1, std::string(severity_tag(x.severity)), severity_tone(x.severity));
    g.put(row++, col + 1, gpu + " " + x.code + ": " + x.title);
  }
}

std::string key_line(const UiState& ui) {
  return fmt::format("Up/Dn Enter:detail s:sort:{} [/]:history z:span:{} p:pause ?:help q:quit",
                     sort_name(ui.sort), span_text(ui.span_ms()));
}

void list_view(Grid& g, const Frame& f, const UiState& ui, const ViewOptions& o) {
  column_titles(g, 1);
  const auto order = sorted_gpus(f, ui.sort);
  const int n = static_cast<int>(order.size());
  const int body = g.rows() - 3;  // header, titles, key line
  const bool two = 2 * n + 3 <= body;
  const int per = two ? 2 : 1;
  const int shown = std::min(n, std::max(1, (body - (two ? 3 : 0)) / per));
  const int sel = static_cast<int>(std::min(ui.selected, order.empty() ? 0 : order.size() - 1));
  const int first = std::clamp(sel - shown + 1, 0, std::max(0, n - shown));
  int row = 2;
  for (int k = first; k < first + shown && k < n; ++k) {
    const GpuRow r = gpu_row(f, order[static_cast<size_t>(k)]);
    gpu_line(g, row++, r, k == sel);
    if (two) history_line(g, row++, f, r, o);
  }
  if (row < g.rows() - 2) findings_block(g, row, g.rows() - 2, f);
}

std::vector<Line> detail_lines(const Frame& f, size_t i, const UiState& ui, int cols,
                               const ViewOptions& o) {
  const GpuState& gs = f.snapshot.gpus[i];
  const GpuRow r = gpu_row(f, i);
  std::vector<Line> out;
  out.push_back({fmt::format("GPU {}  {}  {}", i, gs.info.name, gs.info.pci_bus_id), Tone::kTitle});
  out.push_back({"state: " + std::string(gpu_level_name(r.verdict.level)) +
                     (r.verdict.reason.empty() ? "" : ": " + r.verdict.reason),
                 level_tone(r.verdict.level)});
  out.push_back(
      {fmt::format("util {}  mem {}  temp {} (now/slowdown/shutdown)", r.util, r.mem, r.temp)});
  out.push_back(
      {fmt::format("power {}  SM clock {} MHz  PCIe {} (now/max)", r.power, r.clock, r.pcie)});
  out.push_back({"throttle: " + (r.throttle.empty() ? std::string("none") : r.throttle),
                 r.throttle.empty() ? Tone::kNormal : Tone::kWarn});
  const auto it = f.history.find(r.index);
  const GpuHistory* h = it == f.history.end() ? nullptr : &it->second;
  const int w = std::max(8, cols - 16);
  const auto spark = [&](const char* label, const std::vector<Point>* v, double lo, double hi,
                         const GpuHistory* marks) {
    std::string s = fmt::format("{:<7}", label);
    for (const std::string& c : sparkline(v ? *v : std::vector<Point>{}, marks, f.history_from_ms,
                                          f.history_to_ms, w, lo, hi, o.unicode))
      s += c;
    out.push_back({s});
  };
  out.push_back({fmt::format("history: {} ending {}  (X Xid, ! slowdown)", span_text(ui.span_ms()),
                             ui.back_ms ? "-" + span_text(ui.back_ms) : std::string("now")),
                 Tone::kDim});
  spark("util", h ? &h->util_pct : nullptr, 0, 100, h);
  spark("temp", h ? &h->temp_c : nullptr, 20, gs.info.temp_shutdown_c.value_or(95), nullptr);
  spark("power", h ? &h->power_w : nullptr, 0,
        gs.sample.power_limit_mw.value_or(gs.info.power_max_limit_mw.value_or(1000000)) / 1000.0,
        nullptr);
  const auto& procs = gs.sample.processes;
  out.push_back({fmt::format("PROCESSES ({})", procs ? std::to_string(procs->size()) : "unknown"),
                 Tone::kTitle});
  out.push_back(
      {fmt::format("  {:>8} {:<10} {:>9} {:<6} {}", "PID", "USER", "MEM", "JOB", "COMMAND"),
       Tone::kDim});
  if (procs)
    for (const ProcessInfo& p : *procs) {
      const auto u = f.users.find(p.pid);
      const auto job = f.jobs.find(p.pid);
      out.push_back({fmt::format(
          "  {:>8} {:<10} {:>9} {:<6} {}", p.pid,
          u == f.users.end() ? "?" : u->second.substr(0, 10),
          p.used_mem_bytes ? fmt::format("{:.1f}G", static_cast<double>(*p.used_mem_bytes) /
                                                        (1024.0 * 1024 * 1024))
                           : "-",
          job == f.jobs.end() ? "-" : std::to_string(job->second), p.name.value_or("?"))});
    }
  out.push_back({"FINDINGS", Tone::kTitle});
  for (const WatchFinding& wf : f.findings) {
    const Finding& x = wf.finding;
    if (x.gpu != r.index) continue;
    out.push_back({fmt::format(" {} {}{}: {}", severity_tag(x.severity), x.code,
                               wf.active ? "" : " (cleared)", x.title),
                   wf.active ? severity_tone(x.severity) : Tone::kDim});
    for (const std::string& e : x.evidence)
      for (const std::string& l : wrap("   evidence: " + e, cols - 1, 13)) out.push_back({l});
    for (const std::string& l : wrap("   remedy: " + x.remedy, cols - 1, 11))
      out.push_back({l, Tone::kGood});
  }
  return out;
}

void detail_view(Grid& g, const Frame& f, const UiState& ui, const ViewOptions& o) {
  const auto order = sorted_gpus(f, ui.sort);
  if (order.empty()) return;
  const size_t i = order[std::min(ui.selected, order.size() - 1)];
  const auto lines = detail_lines(f, i, ui, g.cols(), o);
  const int room = g.rows() - 2;
  const int first =
      std::clamp(ui.detail_scroll, 0, std::max(0, static_cast<int>(lines.size()) - room));
  for (int k = 0; k < room && first + k < static_cast<int>(lines.size()); ++k) {
    const Line& l = lines[static_cast<size_t>(first + k)];
    g.put(1 + k, 0, l.text, l.tone);
  }
}

void help_box(Grid& g) {
  static const char* kLines[] = {
      "Keys",
      "  Up/Down, j/k   select a GPU (scroll on the detail page)",
      "  Enter          processes and findings of the selected GPU",
      "  Esc            back to the list",
      "  s              sort: index, health, util, temp, power, memory",
      "  [ / Left       history one window back ( ] / Right forward, l live)",
      "  z              history window: 10m, 1h, 6h, 24h",
      "  p / Space      pause refreshing",
      "  q              quit          (any key closes this help)",
      "Sparklines: u utilization, t temperature; X an Xid, ! a slowdown",
  };
  int row = std::max(1, (g.rows() - 12) / 2);
  for (const char* l : kLines) {
    for (int c = 0; c < g.cols(); ++c) g.at(row, c) = Cell{};
    g.put(row++, 2, l, Tone::kTitle);
  }
}

}  // namespace

Grid render(const Frame& frame, const UiState& ui, int rows, int cols, const ViewOptions& o) {
  Grid g(rows, cols);
  if (rows < 3 || cols < 20) {
    g.put(0, 0, "terminal too small");
    return g;
  }
  header(g, frame, ui);
  if (frame.snapshot.gpus.empty())
    g.put(2, 0, "no GPUs");
  else if (ui.detail)
    detail_view(g, frame, ui, o);
  else
    list_view(g, frame, ui, o);
  if (ui.help) help_box(g);
  g.put(rows - 1, 0, key_line(ui), Tone::kDim);
  return g;
}

}  // namespace gw::watch
