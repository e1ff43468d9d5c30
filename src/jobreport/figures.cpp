// Figures of one GPU over a job's window, each sample weighted by the time it stands for.
#include <algorithm>
#include <array>
#include <cmath>

#include "core/snapshot.h"
#include "jobreport/jobreport.h"

namespace gw::jobreport {
namespace {

constexpr double kLoadUtil = 50;          // "under load"
constexpr double kBusyUtil = 90;          // "looks busy" for the hang test
constexpr double kHangMemUtil = 1;        // memory controller busy share at or below: no traffic
constexpr double kHangPowerShare = 0.35;  // of the enforced limit
constexpr double kHangPowerW = 100;       // when the limit is unknown

struct ReasonDef {
  const char* name;
  uint64_t bit;
};
constexpr std::array<ReasonDef, 5> kReasons = {{
    {"hw_slowdown", clock_reason::kHwSlowdown},
    {"hw_thermal_slowdown", clock_reason::kHwThermalSlowdown},
    {"sw_thermal_slowdown", clock_reason::kSwThermalSlowdown},
    {"hw_power_brake", clock_reason::kHwPowerBrakeSlowdown},
    {"sw_power_cap", clock_reason::kSwPowerCap},
}};

// Seconds each row stands for: up to the next row, but a gap in sampling (over 3x the usual
// interval) is not counted as time spent in the previous state.
std::vector<double> weights(const std::vector<Row>& rows, int64_t end_ms) {
  std::vector<double> w(rows.size(), 0);
  if (rows.empty()) return w;
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < rows.size(); ++i) gaps.push_back(rows[i].t_ms - rows[i - 1].t_ms);
  int64_t typical = 1000;
  if (!gaps.empty()) {
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<long>(gaps.size() / 2), gaps.end());
    typical = std::max<int64_t>(gaps[gaps.size() / 2], 1);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const int64_t next = i + 1 < rows.size() ? rows[i + 1].t_ms : std::max(end_ms, rows[i].t_ms);
    const int64_t gap =
        i + 1 < rows.size() ? next - rows[i].t_ms : std::min(next - rows[i].t_ms, typical);
    w[i] = static_cast<double>(std::min(gap, 3 * typical)) / 1000.0;
  }
  if (rows.size() == 1 && w[0] == 0) w[0] = static_cast<double>(typical) / 1000.0;
  return w;
}

// Time-weighted mean of a field where pred holds; nullopt when no such time.
template <class Pred>
std::optional<double> mean_where(const std::vector<Row>& rows, const std::vector<double>& w,
                                 std::optional<double> Row::*f, Pred pred) {
  double sum = 0, tw = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].*f && pred(rows[i])) {
      sum += *(rows[i].*f) * w[i];
      tw += w[i];
    }
  return tw > 0 ? std::optional<double>(sum / tw) : std::nullopt;
}

template <class Pred>
double seconds_where(const std::vector<Row>& rows, const std::vector<double>& w, Pred pred) {
  double s = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    if (pred(rows[i])) s += w[i];
  return s;
}

bool under_load(const Row& r) {
  return r.util && *r.util >= kLoadUtil;
}

void utilization(const GpuSeries& g, const std::vector<double>& w, GpuFigures& f) {
  const auto any = [](const Row&) { return true; };
  f.util_mean_pct = mean_where(g.rows, w, &Row::util, any);
  const double known = seconds_where(g.rows, w, [](const Row& r) { return r.util.has_value(); });
  if (known <= 0) return;
  struct Bucket {
    const char* name;
    double lo, hi;
  };
  constexpr std::array<Bucket, 4> kBuckets = {
      {{"0-9", 0, 10}, {"10-49", 10, 50}, {"50-89", 50, 90}, {"90-100", 90, 1e9}}};
  for (const Bucket& b : kBuckets)
    f.util_distribution[b.name] =
        seconds_where(g.rows, w,
                      [&](const Row& r) { return r.util && *r.util >= b.lo && *r.util < b.hi; }) /
        known;
  f.idle_share = f.util_distribution["0-9"];
}

void energy(const GpuSeries& g, const std::vector<double>& w, GpuFigures& f) {
  const auto any = [](const Row&) { return true; };
  f.mean_power_w = mean_where(g.rows, w, &Row::power_w, any);
  std::optional<double> first, last;
  for (const Row& r : g.rows)
    if (r.energy_mj) {
      if (!first) first = r.energy_mj;
      last = r.energy_mj;
    }
  if (first && last && *last > *first) {
    f.energy_j = (*last - *first) / 1000.0;
  } else if (f.mean_power_w) {
    const double s = seconds_where(g.rows, w, [](const Row& r) { return r.power_w.has_value(); });
    f.energy_j = *f.mean_power_w * s;
  }
  for (const Row& r : g.rows)
    if (r.mem_used) f.peak_mem_bytes = std::max(f.peak_mem_bytes.value_or(0), *r.mem_used);
}

void throttling(const GpuSeries& g, const std::vector<double>& w, GpuFigures& f) {
  if (f.sampled_s <= 0) return;
  for (const ReasonDef& d : kReasons) {
    const auto set = [&](const Row& r) {
      return r.reasons && (static_cast<uint64_t>(*r.reasons) & d.bit) != 0;
    };
    const double s = seconds_where(g.rows, w, set);
    if (s <= 0) continue;
    f.throttles.push_back({d.name, s / f.sampled_s, mean_where(g.rows, w, &Row::temp_c, set)});
  }
  std::sort(f.throttles.begin(), f.throttles.end(),
            [](const ThrottleShare& a, const ThrottleShare& b) { return a.share > b.share; });
}

void load_state(const GpuSeries& g, const std::vector<double>& w, GpuFigures& f) {
  f.load_sm_clock_mhz = mean_where(g.rows, w, &Row::sm_clock, under_load);
  if (g.gpu.max_sm_clock_mhz) f.max_sm_clock_mhz = *g.gpu.max_sm_clock_mhz;
  for (const Row& r : g.rows) {
    if (!under_load(r)) continue;
    if (r.pcie_gen) f.load_pcie_gen = std::min(f.load_pcie_gen.value_or(1e9), *r.pcie_gen);
    if (r.pcie_width) f.load_pcie_width = std::min(f.load_pcie_width.value_or(1e9), *r.pcie_width);
  }
  f.max_pcie_gen = g.gpu.max_pcie_gen;
  f.max_pcie_width = g.gpu.max_pcie_width;
  const auto tx = mean_where(g.rows, w, &Row::pcie_tx, under_load);
  const auto rx = mean_where(g.rows, w, &Row::pcie_rx, under_load);
  if (tx || rx) f.load_pcie_mb_s = (tx.value_or(0) + rx.value_or(0)) / 1000.0;
}

void hang(const GpuSeries& g, const std::vector<double>& w, GpuFigures& f) {
  const double low_w = g.gpu.power_limit_w ? *g.gpu.power_limit_w * kHangPowerShare : kHangPowerW;
  const auto hung = [&](const Row& r) {
    return r.util && *r.util >= kBusyUtil && r.util_mem && *r.util_mem <= kHangMemUtil &&
           r.power_w && *r.power_w < low_w;
  };
  f.hang_s = seconds_where(g.rows, w, hung);
  f.hang_power_w = mean_where(g.rows, w, &Row::power_w, hung);
}

}  // namespace

GpuFigures gpu_figures(const GpuSeries& g, int64_t /*start_ms*/, int64_t end_ms) {
  GpuFigures f;
  f.uuid = g.gpu.uuid;
  f.index = g.gpu.index;
  f.shared_with = g.gpu.shared_with;
  const std::vector<double> w = weights(g.rows, end_ms);
  for (double x : w) f.sampled_s += x;
  utilization(g, w, f);
  energy(g, w, f);
  throttling(g, w, f);
  load_state(g, w, f);
  hang(g, w, f);
  return f;
}

JobReport analyse(const Series& s) {
  JobReport r;
  r.job_id = s.window.job_id;
  r.start_ms = s.window.start_ms;
  r.end_ms = s.window.end_ms;
  const double wall_s = static_cast<double>(r.end_ms - r.start_ms) / 1000.0;
  if (s.window.cpu_seconds && wall_s > 0) r.cpu_cores = *s.window.cpu_seconds / wall_s;
  for (const GpuSeries& g : s.gpus) {
    r.gpus.push_back(gpu_figures(g, r.start_ms, r.end_ms));
    if (!g.rows.empty()) r.no_data = false;
  }
  for (const store::StoredEvent& e : s.events)
    r.events.push_back({static_cast<double>(e.t_ms - r.start_ms) / 1000.0, e.event.gpu_index,
                        std::string(event_kind_name(e.event.kind)), e.event.code, e.event.message});
  r.causes = rank_causes(r);
  return r;
}

}  // namespace gw::jobreport
