// Thermal rules: hot GPUs, thermal slowdown, one GPU hotter than its peers, fans at the limit,
// and clocks held far below their maximum under load.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// 5 C: NVIDIA's guidance is to alert on margin-to-slowdown below 5-10 C; at 5 C a small rise
// in room temperature or load already costs clock speed.
constexpr int kNearSlowdownMarginC = 5;
// A SW thermal flag on a GPU this far below its limit contradicts the reading (fixture 003).
constexpr int kCoolMarginC = 20;
// Fallback limits when the source gives no thresholds: GPUs reach max operating temperature
// in the low-to-mid 80s C and HBM in the mid 90s.
constexpr int kFallbackGpuHotC = 80;
constexpr int kFallbackCoolGpuC = 60;
constexpr int kFallbackCoolMemC = 70;
// 15 C above the median of GPUs under the same load points at airflow, not workload.
constexpr double kHotterThanPeersC = 15.0;
// Fans at 95 %+ are at their mechanical limit: no cooling headroom left.
constexpr unsigned kFanMaxPct = 95;
// Under load a healthy GPU boosts to 80-100 % of its max clock; below 60 % something holds
// it back.
constexpr double kLowClockRatio = 0.6;

const std::string kThermalRemedy =
    "Improve cooling: check that the fans spin and intakes are not blocked, clean dust from "
    "heatsinks and filters, keep the room (inlet air) at 16-25 C, leave a slot between cards; "
    "if one card stays hot, re-apply thermal paste or have it serviced.";

int max_temp(const GpuSeries& g) {
  int t = std::numeric_limits<int>::min();
  for (const GpuSample* s : g.samples) {
    if (s->temp_c) t = std::max(t, *s->temp_c);
  }
  return t;
}

bool has_temp(const GpuSeries& g) {
  return std::any_of(g.samples.begin(), g.samples.end(),
                     [](const GpuSample* s) { return s->temp_c.has_value(); });
}

std::optional<double> mean_temp(const GpuSeries& g) {
  double sum = 0;
  size_t n = 0;
  for (const GpuSample* s : g.samples) {
    if (s->temp_c) {
      sum += *s->temp_c;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

// Evidence line for a clock-reason bit: share of samples plus the violation counter, if any.
std::vector<std::string> reason_evidence(const GpuSeries& g, uint64_t bit, const char* name,
                                         std::optional<uint64_t> ViolationCounters::*counter) {
  std::vector<std::string> ev;
  const size_t hits = count_bit(g, bit);
  ev.push_back(fmt::format("{} active {}", name, share_text(hits, g.samples.size())));
  // A counter that did not move while the flag was set is not tracking: leave it out rather
  // than print evidence that contradicts the flag.
  if (auto frac = counter_share(g, counter); frac && *frac > 0) {
    ev.push_back(fmt::format("violation counter: held back {} of the {:.0f} s window", pct(*frac),
                             window_s(g)));
  }
  return ev;
}

}  // namespace

void rule_thermal_near_slowdown(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (!has_temp(g)) continue;
    const DeviceInfo& info = *g.info;
    const std::optional<int> limit =
        info.temp_slowdown_c ? info.temp_slowdown_c : info.temp_max_operating_c;
    if (!limit) continue;
    const int t = max_temp(g);
    if (t < *limit - kNearSlowdownMarginC) continue;
    const char* what = info.temp_slowdown_c ? "slowdown" : "max operating";
    std::vector<std::string> ev{
        fmt::format("{} C, {} threshold {} C ({})", t, what, *limit,
                    t >= *limit ? "at or above it" : fmt::format("{} C below", *limit - t))};
    if (info.temp_shutdown_c) ev.push_back(fmt::format("shutdown at {} C", *info.temp_shutdown_c));
    out.push_back(
        make_finding("thermal.near_slowdown", Severity::kWarning, &g,
                     fmt::format("{} is at {} C, near its {} threshold", gpu_label(g), t, what),
                     std::move(ev), kThermalRemedy));
  }
}

void rule_thermal_sw_slowdown(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (count_bit(g, clock_reason::kSwThermalSlowdown) == 0) continue;
    auto ev = reason_evidence(g, clock_reason::kSwThermalSlowdown, "SW thermal slowdown",
                              &ViolationCounters::sw_thermal_ns);
    const GpuSample& s = *g.last();
    const DeviceInfo& info = *g.info;
    const int cool_gpu =
        info.temp_max_operating_c ? *info.temp_max_operating_c - kCoolMarginC : kFallbackCoolGpuC;
    const int cool_mem =
        info.temp_mem_max_c ? *info.temp_mem_max_c - kCoolMarginC : kFallbackCoolMemC;
    const bool cool =
        s.temp_c && *s.temp_c < cool_gpu && (!s.mem_temp_c || *s.mem_temp_c < cool_mem);
    if (s.temp_c) ev.push_back(fmt::format("GPU at {} C", *s.temp_c));
    if (s.mem_temp_c) ev.push_back(fmt::format("memory at {} C", *s.mem_temp_c));
    if (cool) {
      ev.push_back(
          "the flag contradicts the temperature readings: reported as captured, "
          "not as a temperature problem");
      out.push_back(make_finding(
          "thermal.sw_slowdown", Severity::kInfo, &g,
          fmt::format("{} reports SW thermal slowdown while cool", gpu_label(g)), std::move(ev),
          "Re-check under load (gpuwarden doctor --window 60); if the flag stays set while the "
          "GPU is cool, update the driver and VBIOS."));
      continue;
    }
    out.push_back(
        make_finding("thermal.sw_slowdown", Severity::kWarning, &g,
                     fmt::format("{} is slowed down by the driver to cool off", gpu_label(g)),
                     std::move(ev), kThermalRemedy));
  }
}

void rule_thermal_hw_slowdown(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (count_bit(g, clock_reason::kHwThermalSlowdown) == 0) continue;
    auto ev = reason_evidence(g, clock_reason::kHwThermalSlowdown, "HW thermal slowdown",
                              &ViolationCounters::hw_thermal_ns);
    if (const auto& t = g.last()->temp_c) ev.push_back(fmt::format("GPU at {} C", *t));
    if (g.info->temp_slowdown_c)
      ev.push_back(fmt::format("slowdown threshold {} C", *g.info->temp_slowdown_c));
    out.push_back(make_finding("thermal.hw_slowdown", Severity::kCritical, &g,
                               fmt::format("{} is overheating: hardware cut its clocks by half "
                                           "or more",
                                           gpu_label(g)),
                               std::move(ev), kThermalRemedy));
  }
}

void rule_thermal_hotter_than_peers(const DiagnoseContext& c, Findings& out) {
  // Compare only GPUs under similar load: a busy GPU is rightly hotter than an idle one.
  for (const bool loaded_group : {true, false}) {
    std::vector<std::pair<const GpuSeries*, double>> group;
    for (const GpuSeries& g : c.gpus) {
      const auto t = mean_temp(g);
      if (!t) continue;
      if ((share(g, is_loaded) >= 0.5) == loaded_group) group.emplace_back(&g, *t);
    }
    if (group.size() < 2) continue;
    for (const auto& [g, t] : group) {
      std::vector<double> others;
      for (const auto& [o, ot] : group) {
        if (o != g) others.push_back(ot);
      }
      std::nth_element(others.begin(), others.begin() + static_cast<long>(others.size() / 2),
                       others.end());
      const double median = others[others.size() / 2];
      if (t - median < kHotterThanPeersC) continue;
      out.push_back(make_finding(
          "thermal.hotter_than_peers", Severity::kWarning, g,
          fmt::format("{} runs {:.0f} C hotter than its peers", gpu_label(*g), t - median),
          {fmt::format("{:.0f} C vs a median of {:.0f} C across {} other {} GPUs", t, median,
                       others.size(), loaded_group ? "loaded" : "idle")},
          "Check this card's airflow: a blocked intake, a failed fan, a card sandwiched without "
          "spacing, or dried thermal paste. Swap slots with a cool card to tell slot from card."));
    }
  }
}

void rule_thermal_fan_max_hot(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const int hot = g.info->temp_max_operating_c
                        ? *g.info->temp_max_operating_c - kNearSlowdownMarginC
                        : kFallbackGpuHotC;
    const size_t hits = count_if(g, [hot](const GpuSample& s) {
      return s.fan_pct && *s.fan_pct >= kFanMaxPct && s.temp_c && *s.temp_c >= hot;
    });
    if (hits == 0) continue;
    const GpuSample& s = *g.last();
    out.push_back(
        make_finding("thermal.fan_max_hot", Severity::kWarning, &g,
                     fmt::format("{} fans are at full speed and it is still hot", gpu_label(g)),
                     {fmt::format("fan {}% at {} C (hot from {} C) {}", s.fan_pct.value_or(0),
                                  s.temp_c.value_or(0), hot, share_text(hits, g.samples.size()))},
                     kThermalRemedy));
  }
}

void rule_clocks_low_under_load(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const auto max = max_clock(g);
    if (!max) continue;
    const size_t loaded = count_if(g, is_loaded);
    if (loaded == 0) continue;
    uint64_t reasons = 0;
    double clock_sum = 0;
    const size_t low = count_if(g, [&](const GpuSample& s) {
      const auto clk = clock_of(s);
      if (!is_loaded(s) || !clk || *clk >= kLowClockRatio * *max) return false;
      reasons |= s.clock_reasons.value_or(0) & ~clock_reason::kGpuIdle;
      clock_sum += *clk;
      return true;
    });
    // Most of the loaded time must be slow: a single dip is a boost transition.
    if (low == 0 || 2 * low < loaded) continue;
    const double mean = clock_sum / static_cast<double>(low);
    out.push_back(
        make_finding("clocks.low_under_load", Severity::kWarning, &g,
                     fmt::format("{} runs at {:.0f}% of its max clock under load", gpu_label(g),
                                 100.0 * mean / *max),
                     {fmt::format("{:.0f} MHz vs max {} MHz in {} of {} loaded samples", mean, *max,
                                  low, loaded),
                      fmt::format("clock limiters reported: {}", reasons_text(reasons))}));
  }
}

}  // namespace gw
