// Thermal rules: hot GPUs, thermal slowdown, one GPU hotter than its peers, fans at the limit,
// and clocks held far below their maximum under load.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <vector>

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
// 12 C above the coolest card at similar load, while within 10 C of the limit (or 80 C):
// uneven cooling that will cost clocks first on the hot cards.
constexpr double kUnevenSpreadC = 12.0;
constexpr int kUnevenHotMarginC = 10;
// Fans at 95 %+ are at their mechanical limit: no cooling headroom left.
constexpr unsigned kFanMaxPct = 95;
// Under load a healthy GPU boosts to 80-100 % of its max clock; below 60 % something holds
// it back.
constexpr double kLowClockRatio = 0.6;

// 90 %: a loaded sample this close to the reference clock is running normally.
constexpr double kNearRefClockRatio = 0.9;
// A minute of accumulated time behind one limiter is worth a line; less is boost noise.
constexpr uint64_t kReasonHistoryMinNs = 60ULL * 1000 * 1000 * 1000;
// 3 C warmer in the slow samples than in the fast ones: heat is rising as clocks fall.
constexpr double kThermalTrendC = 3.0;

struct Temps {
  double sum = 0;
  size_t n = 0;
  void add(std::optional<int> t) {
    if (t) sum += *t, ++n;
  }
  std::optional<double> mean() const {
    return n ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
  }
};

// What the temperature did while the clock fell: rising toward a limit is a thermal cap, flat
// or falling is a power or platform cap (power limit, PSU, BMC capping, power brake).
std::string temperature_trend(const Temps& low, const Temps& high, const DeviceInfo& d) {
  const auto lo = low.mean();
  if (!lo) return {};
  const auto limit = d.temp_max_operating_c ? d.temp_max_operating_c : d.temp_slowdown_c;
  if (limit && *lo >= *limit - kNearSlowdownMarginC)
    return fmt::format(
        "temperature {:.0f} C in the slow samples, near the {} C limit: a thermal cap", *lo,
        *limit);
  const auto hi = high.mean();
  if (!hi) return {};
  if (*lo >= *hi + kThermalTrendC)
    return fmt::format(
        "temperature rose from {:.0f} C to {:.0f} C as the clock fell: a thermal cap", *hi, *lo);
  return fmt::format(
      "temperature {:.0f} C in the slow samples vs {:.0f} C at full clock (not rising): a "
      "power or platform cap, not a thermal one",
      *lo, *hi);
}

const std::string kThermalRemedy =
    "Improve cooling: check that the fans spin and intakes are not blocked, clean dust from "
    "heatsinks and filters, keep the room (inlet air) at 16-25 C, leave a slot between cards; "
    "if one card stays hot, re-apply thermal paste or have it serviced.";

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

// One GPU's mean temperature against the other GPUs under similar load (a busy GPU is rightly
// hotter than an idle one); only groups of 2+ GPUs.
struct Peer {
  const GpuSeries* g = nullptr;
  double t = 0, median = 0, coolest = 0;
  size_t others = 0;
  bool loaded = false;
};

std::vector<Peer> peer_temps(const DiagnoseContext& c) {
  std::vector<Peer> out;
  for (const bool loaded_group : {true, false}) {
    std::vector<std::pair<const GpuSeries*, double>> group;
    for (const GpuSeries& g : c.gpus) {
      const auto t = mean_temp(g);
      if (t && (share(g, is_loaded) >= 0.5) == loaded_group) group.emplace_back(&g, *t);
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
      const double coolest = *std::min_element(others.begin(), others.end());
      out.push_back({g, t, median, coolest, others.size(), loaded_group});
    }
  }
  return out;
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

// Degrees left below one thermal limit in one sample, and how that was known.
struct Headroom {
  int margin_c = 0;   // negative: above the limit
  int temp_c = 0;     // the reading (absolute path only)
  const char* limit;  // "max operating", "slowdown"
  bool by_margin = false;
  std::string text;  // evidence line
};

std::string headroom_words(int margin) {
  if (margin <= 0) return margin == 0 ? "at it" : fmt::format("{} C above it", -margin);
  return fmt::format("{} C below", margin);
}

// Every limit this sample can be judged against. Max operating comes first: laptops and some
// boards cap there far below slowdown (clocks may drop below base above it). Margin-only
// drivers (T.Limit) give signed offsets instead of temperatures.
std::vector<Headroom> headrooms(const DeviceInfo& d, const GpuSample& s) {
  std::vector<Headroom> out;
  if (s.temp_c) {
    const int t = *s.temp_c;
    if (d.temp_max_operating_c)
      out.push_back(
          {*d.temp_max_operating_c - t, t, "max operating", false,
           fmt::format("{} C, max operating temperature {} C ({})", t, *d.temp_max_operating_c,
                       headroom_words(*d.temp_max_operating_c - t))});
    if (d.temp_slowdown_c)
      out.push_back({*d.temp_slowdown_c - t, t, "slowdown", false,
                     fmt::format("{} C, slowdown threshold {} C ({})", t, *d.temp_slowdown_c,
                                 headroom_words(*d.temp_slowdown_c - t))});
  }
  if (!out.empty() || !s.tlimit_margin_c) return out;
  const int m = *s.tlimit_margin_c;
  // T.Limit itself is where the driver starts to hold clocks back (max operating offset 0 on
  // every board seen); the slowdown offset is usually a few degrees above it.
  const int max_op = d.tlimit_max_operating_c.value_or(0);
  out.push_back({m - max_op, 0, "max operating (T.Limit)", true,
                 fmt::format("T.Limit margin {} C, max operating at offset {} C ({})", m, max_op,
                             headroom_words(m - max_op))});
  if (d.tlimit_slowdown_c)
    out.push_back({m - *d.tlimit_slowdown_c, 0, "slowdown (T.Limit)", true,
                   fmt::format("T.Limit margin {} C, slowdown at offset {} C ({})", m,
                               *d.tlimit_slowdown_c, headroom_words(m - *d.tlimit_slowdown_c))});
  return out;
}

}  // namespace

void rule_thermal_near_slowdown(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    // The sample with the least headroom to any known limit, and which limit that is.
    std::optional<Headroom> worst;
    for (const GpuSample* s : g.samples) {
      for (const Headroom& h : headrooms(*g.info, *s)) {
        if (!worst || h.margin_c < worst->margin_c) worst = h;
      }
    }
    if (!worst || worst->margin_c > kNearSlowdownMarginC) continue;
    std::vector<std::string> ev{worst->text};
    if (worst->by_margin)
      ev.push_back(
          "this driver reports margins only (T.Limit), no absolute thresholds: judged by the "
          "margin");
    if (g.info->temp_shutdown_c)
      ev.push_back(fmt::format("shutdown at {} C", *g.info->temp_shutdown_c));
    std::string title = worst->by_margin ? fmt::format("{} is {} C from its {} limit", gpu_label(g),
                                                       worst->margin_c, worst->limit)
                                         : fmt::format("{} is at {} C, near its {} threshold",
                                                       gpu_label(g), worst->temp_c, worst->limit);
    out.push_back(make_finding("thermal.near_slowdown", Severity::kWarning, &g, std::move(title),
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
  for (const Peer& p : peer_temps(c)) {
    if (p.t - p.median < kHotterThanPeersC) continue;
    out.push_back(make_finding(
        "thermal.hotter_than_peers", Severity::kWarning, p.g,
        fmt::format("{} runs {:.0f} C hotter than its peers", gpu_label(*p.g), p.t - p.median),
        {fmt::format("{:.0f} C vs a median of {:.0f} C across {} other {} GPUs", p.t, p.median,
                     p.others, p.loaded ? "loaded" : "lightly loaded or idle")},
        "Check this card's airflow: a blocked intake, a failed fan, a card sandwiched without "
        "spacing, or dried thermal paste. Swap slots with a cool card to tell slot from card."));
  }
}

void rule_thermal_uneven(const DiagnoseContext& c, Findings& out) {
  for (const Peer& p : peer_temps(c)) {
    // Two or more hot cards in one chassis raise the median with them (fixture 126: 83 and
    // 84 C next to 80 and 70 C): compare with the coolest card too, but only when hot.
    if (p.t - p.median >= kHotterThanPeersC) continue;  // thermal.hotter_than_peers
    const int hot = p.g->info->temp_max_operating_c
                        ? *p.g->info->temp_max_operating_c - kUnevenHotMarginC
                        : kFallbackGpuHotC;
    if (p.others < 2 || p.t - p.coolest < kUnevenSpreadC || p.t < hot) continue;
    out.push_back(make_finding(
        "thermal.uneven", Severity::kWarning, p.g,
        fmt::format("{} runs {:.0f} C hotter than the coolest GPU at similar load", gpu_label(*p.g),
                    p.t - p.coolest),
        {fmt::format("{:.0f} C vs {:.0f} C on the coolest of {} other {} GPUs (median {:.0f} C); "
                     "hot from {} C",
                     p.t, p.coolest, p.others, p.loaded ? "loaded" : "lightly loaded or idle",
                     p.median, hot)},
        "Improve airflow before it reaches its slowdown temperature: cards in the middle of a "
        "stack run hottest; add spacing or stronger chassis fans, check intakes and dust."));
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
    // Without a known maximum (dmon, CSV without clocks.max.*) the highest clock this GPU
    // reached in the window is the reference: a collapse from it is still a collapse.
    const auto known_max = max_clock(g);
    std::optional<unsigned> seen_max;
    for (const GpuSample* s : g.samples) {
      if (const auto clk = clock_of(*s); clk && (!seen_max || *clk > *seen_max)) seen_max = clk;
    }
    const auto ref = known_max ? known_max : seen_max;
    if (!ref || *ref == 0 || (!known_max && g.samples.size() < 2)) continue;
    const size_t loaded = count_if(g, is_loaded);
    if (loaded == 0) continue;
    uint64_t reasons = 0;
    double clock_sum = 0;
    Temps low_t, high_t;
    const size_t low = count_if(g, [&](const GpuSample& s) {
      const auto clk = clock_of(s);
      if (!is_loaded(s) || !clk) return false;
      if (*clk >= kLowClockRatio * *ref) {
        if (*clk >= kNearRefClockRatio * *ref) high_t.add(s.temp_c);
        return false;
      }
      reasons |= s.clock_reasons.value_or(0) & ~clock_reason::kGpuIdle;
      clock_sum += *clk;
      low_t.add(s.temp_c);
      return true;
    });
    // Most of the loaded time must be slow: a single dip is a boost transition. Against the
    // window's own peak, half the loaded samples are enough to call the peak the normal clock.
    if (low == 0 || 2 * low < loaded) continue;
    const double mean = clock_sum / static_cast<double>(low);
    std::vector<std::string> ev{
        known_max ? fmt::format("{:.0f} MHz vs max {} MHz in {} of {} loaded samples", mean, *ref,
                                low, loaded)
                  : fmt::format("{:.0f} MHz vs {} MHz, the highest clock seen in this window "
                                "(the maximum is not in the input), in {} of {} loaded samples",
                                mean, *ref, low, loaded),
        fmt::format("clock limiters reported: {}", reasons_text(reasons))};
    if (auto trend = temperature_trend(low_t, high_t, *g.info); !trend.empty())
      ev.push_back(std::move(trend));
    out.push_back(
        make_finding("clocks.low_under_load", Severity::kWarning, &g,
                     fmt::format("{} runs at {:.0f}% of its {} clock under load", gpu_label(g),
                                 100.0 * mean / *ref, known_max ? "max" : "peak"),
                     std::move(ev)));
  }
}

void rule_clocks_unknown_reason(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const size_t hits = count_bit(g, clock_reason::kUnknown);
    if (hits == 0) continue;
    out.push_back(
        make_finding("clocks.unknown_reason", Severity::kInfo, &g,
                     fmt::format("{} reports the legacy \"Unknown\" clock reason", gpu_label(g)),
                     {fmt::format("reason bit 0x8000000000000000 (Unknown) set {}",
                                  share_text(hits, g.samples.size()))}));
  }
}

void rule_clocks_reason_history(const DiagnoseContext& c, Findings& out) {
  struct Counter {
    std::optional<uint64_t> ViolationCounters::*field;
    uint64_t bit;
    const char* name;
  };
  // SW power cap has its own rule (power.cap_history). Sync boost is coordination, not a limit.
  static constexpr Counter kCounters[] = {
      {&ViolationCounters::sw_thermal_ns, clock_reason::kSwThermalSlowdown, "SW thermal slowdown"},
      {&ViolationCounters::hw_thermal_ns, clock_reason::kHwThermalSlowdown, "HW thermal slowdown"},
      {&ViolationCounters::hw_power_brake_ns, clock_reason::kHwPowerBrakeSlowdown,
       "HW power brake"},
      {&ViolationCounters::thermal_ns, clock_reason::kSwThermalSlowdown, "thermal limit"},
      {&ViolationCounters::board_limit_ns, 0, "board limit"},
      {&ViolationCounters::reliability_ns, 0, "reliability limit"},
  };
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    std::vector<std::string> ev;
    for (const Counter& k : kCounters) {
      const auto& ns = g.last()->violations.*(k.field);
      if (!ns || *ns < kReasonHistoryMinNs) continue;
      if (k.bit != 0 && count_bit(g, k.bit) > 0) continue;  // current: its own rule reports it
      std::string line = fmt::format("{}: {:.0f} s accumulated since the driver loaded", k.name,
                                     static_cast<double>(*ns) / 1e9);
      if (const auto frac = counter_share(g, k.field); frac && *frac > 0)
        line += fmt::format(", {} of this window", pct(*frac));
      else
        line += ", not active now";
      ev.push_back(std::move(line));
    }
    if (ev.empty()) continue;
    out.push_back(make_finding("clocks.reason_history", Severity::kInfo, &g,
                               fmt::format("{} was held back in the past (not now)", gpu_label(g)),
                               std::move(ev)));
  }
}

}  // namespace gw
