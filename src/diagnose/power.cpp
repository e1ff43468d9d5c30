// Power rules: hardware power brake / slowdown (platform power), SW power capping under load
// and at idle, power limits set below default, and capping history.
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// Clocks at 90 %+ of max while a "brake" flag is set means the flag cost nothing yet
// (fixture 003's inconsistent flags): report it, but not as critical.
constexpr double kBrakeHarmlessClockRatio = 0.9;
// A limit 2 % under default is a deliberate change, not rounding of the reported watts.
constexpr double kLimitBelowDefaultRatio = 0.98;
// A minute of accumulated capping is worth a line; less is noise from boost transitions.
constexpr uint64_t kCapHistoryMinNs = 60ULL * 1000 * 1000 * 1000;

const std::string kPlatformPowerRemedy =
    "Check the platform power: PSU health and redundancy (ipmitool sdr / BMC event log), "
    "power cables and connectors to the GPU or baseboard, and BMC/IPMI power capping or "
    "power-brake policies. Reseat cables; replace a failing PSU.";

size_t gpus_with_bit(const DiagnoseContext& c, uint64_t bit) {
  size_t n = 0;
  for (const GpuSeries& g : c.gpus) {
    if (count_bit(g, bit) > 0) ++n;
  }
  return n;
}

// "86 MHz vs max 1980 MHz, 67.7 W of 700.0 W" for the newest sample.
std::string clocks_and_power(const GpuSeries& g) {
  const GpuSample& s = *g.last();
  std::string out;
  if (const auto clk = clock_of(s)) {
    out = fmt::format("{} MHz", *clk);
    if (const auto max = max_clock(g)) out += fmt::format(" vs max {} MHz", *max);
  }
  if (s.power_mw) {
    if (!out.empty()) out += ", ";
    out += watts(*s.power_mw);
    if (s.power_limit_mw) out += " of " + watts(*s.power_limit_mw) + " limit";
  }
  if (s.pstate) out += fmt::format(" in P{}", *s.pstate);
  return out;
}

bool clocks_near_max(const GpuSeries& g) {
  const auto clk = clock_of(*g.last());
  const auto max = max_clock(g);
  return clk && max && *clk >= kBrakeHarmlessClockRatio * *max;
}

void emit_platform(const DiagnoseContext& c, Findings& out, const GpuSeries& g,
                   std::string_view code, uint64_t bit, const char* name, std::string title) {
  const size_t n_gpus = gpus_with_bit(c, bit);
  std::vector<std::string> ev{
      fmt::format("{} active {}", name, share_text(count_bit(g, bit), g.samples.size()))};
  if (const auto frac = counter_share(g, &ViolationCounters::hw_power_brake_ns);
      frac && *frac > 0 && bit == clock_reason::kHwPowerBrakeSlowdown) {
    ev.push_back(fmt::format("violation counter: braked {} of the window", pct(*frac)));
  }
  if (auto cp = clocks_and_power(g); !cp.empty()) ev.push_back(std::move(cp));
  std::string remedy = kPlatformPowerRemedy;
  if (c.gpus.size() > 1 && n_gpus == c.gpus.size()) {
    ev.push_back(fmt::format("all {} GPUs of this node show it", n_gpus));
    remedy = "Check the whole node, not the GPUs. " + remedy;
  }
  Severity sev = Severity::kCritical;
  if (clocks_near_max(g)) {
    sev = Severity::kWarning;
    ev.push_back(
        "clocks are still near max: the flag has not cost speed yet (flags may be "
        "inconsistent; re-check under load)");
  }
  out.push_back(make_finding(code, sev, &g, std::move(title), std::move(ev), std::move(remedy)));
}

}  // namespace

void rule_power_hw_brake(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (count_bit(g, clock_reason::kHwPowerBrakeSlowdown) == 0) continue;
    emit_platform(
        c, out, g, "power.hw_power_brake", clock_reason::kHwPowerBrakeSlowdown,
        "HW power brake slowdown",
        fmt::format("{} is held by an external power brake (PSU / BMC / baseboard)", gpu_label(g)));
  }
}

void rule_power_hw_slowdown(const DiagnoseContext& c, Findings& out) {
  // HW slowdown with neither the thermal nor the power-brake sub-reason: the fast power
  // trigger or an unlabelled platform signal.
  constexpr uint64_t kExplained =
      clock_reason::kHwThermalSlowdown | clock_reason::kHwPowerBrakeSlowdown;
  for (const GpuSeries& g : c.gpus) {
    const size_t hits = count_if(g, [](const GpuSample& s) {
      const uint64_t r = s.clock_reasons.value_or(0);
      return (r & clock_reason::kHwSlowdown) != 0 && (r & kExplained) == 0;
    });
    if (hits == 0) continue;
    emit_platform(c, out, g, "power.hw_slowdown", clock_reason::kHwSlowdown, "HW slowdown",
                  fmt::format("{} clocks are cut by a hardware slowdown signal", gpu_label(g)));
  }
}

void rule_power_sw_cap(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const size_t loaded = count_if(g, is_loaded);
    const size_t hits = count_if(g, [](const GpuSample& s) {
      return is_loaded(s) && (s.clock_reasons.value_or(0) & clock_reason::kSwPowerCap) != 0;
    });
    if (hits == 0) continue;
    const GpuSample& s = *g.last();
    std::vector<std::string> ev{
        fmt::format("SW power cap active in {} of {} loaded samples", hits, loaded)};
    if (auto cp = clocks_and_power(g); !cp.empty()) ev.push_back(std::move(cp));
    if (const auto frac = counter_share(g, &ViolationCounters::power_ns); frac && *frac > 0)
      ev.push_back(fmt::format("violation counter: capped {} of the window", pct(*frac)));
    const auto def = g.info->power_default_limit_mw;
    const bool lowered =
        s.power_limit_mw && def && *s.power_limit_mw < kLimitBelowDefaultRatio * *def;
    if (lowered) {
      ev.push_back(
          fmt::format("limit {} is below the default {}", watts(*s.power_limit_mw), watts(*def)));
      out.push_back(make_finding(
          "power.sw_cap", Severity::kWarning, &g,
          fmt::format("{} is power-capped under load at a lowered limit", gpu_label(g)),
          std::move(ev),
          fmt::format("Restore the default limit: sudo nvidia-smi -i {} -pl {:.0f} (check PSU "
                      "capacity first if it was lowered on purpose).",
                      g.index, static_cast<double>(*def) / 1000.0)));
      continue;
    }
    out.push_back(make_finding(
        "power.sw_cap", Severity::kInfo, &g,
        fmt::format("{} runs at its power limit under load", gpu_label(g)), std::move(ev),
        "Expected at full load: the GPU trades clock speed to stay within its rated power. "
        "Only if the job is slower than expected, check that the limit is the default "
        "(nvidia-smi -q -d POWER) and that cooling is good (hot GPUs draw more power)."));
  }
}

void rule_power_sw_cap_idle(const DiagnoseContext& c, Findings& out) {
  constexpr uint64_t kCap = clock_reason::kSwPowerCap;
  for (const GpuSeries& g : c.gpus) {
    const size_t hits = count_bit(g, kCap);
    if (hits == 0) continue;
    auto capped = [](const GpuSample& s) { return (s.clock_reasons.value_or(0) & kCap) != 0; };
    if (count_if(g, [&](const GpuSample& s) { return capped(s) && is_loaded(s); }) > 0)
      continue;  // power.sw_cap covers it
    // "Idle" must be affirmative: utilization under 5 % or the Idle reason. A capped sample
    // whose load is unknown, or light but real, is a power-cap finding that says so.
    const size_t unknown =
        count_if(g, [&](const GpuSample& s) { return capped(s) && load_unknown(s); });
    const size_t idle = count_if(g, [&](const GpuSample& s) { return capped(s) && is_idle(s); });
    std::vector<std::string> ev;
    if (auto cp = clocks_and_power(g); !cp.empty()) ev.push_back(cp);
    if (idle == hits) {
      ev.insert(ev.begin(), fmt::format("SW power cap flagged {} while idle (utilization under "
                                        "5% or the Idle reason)",
                                        share_text(hits, g.samples.size())));
      out.push_back(
          make_finding("power.sw_cap_idle", Severity::kInfo, &g,
                       fmt::format("{} flags SW power cap while idle (no impact)", gpu_label(g)),
                       std::move(ev)));
      continue;
    }
    const bool no_load_info = unknown > 0;
    ev.insert(ev.begin(),
              no_load_info
                  ? fmt::format("SW power cap active {}; the load is unknown (no utilization in "
                                "the input, no Idle reason): cannot tell idle from busy",
                                share_text(unknown, g.samples.size()))
                  : fmt::format("SW power cap active {} at light load (5-30% utilization)",
                                share_text(hits - idle, g.samples.size())));
    out.push_back(make_finding(
        "power.sw_cap", Severity::kInfo, &g,
        no_load_info ? fmt::format("{} is power-capped; its load is unknown", gpu_label(g))
                     : fmt::format("{} is power-capped at light load", gpu_label(g)),
        std::move(ev),
        "Check whether a job runs on it (nvidia-smi --query-gpu=utilization.gpu,power.draw,"
        "power.limit --format=csv -l 1): capping under load is expected at full power; capping "
        "at low power means the limit is lowered (nvidia-smi -q -d POWER)."));
  }
}

void rule_power_limit_below_default(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    const GpuSample& s = *g.last();
    const auto def = g.info->power_default_limit_mw;
    if (!s.power_limit_mw || !def || *s.power_limit_mw >= kLimitBelowDefaultRatio * *def) continue;
    out.push_back(make_finding(
        "power.limit_below_default", Severity::kWarning, &g,
        fmt::format("{} power limit is set below its default", gpu_label(g)),
        {fmt::format("enforced limit {} vs default {} ({} of default)", watts(*s.power_limit_mw),
                     watts(*def), pct(static_cast<double>(*s.power_limit_mw) / *def))},
        fmt::format("If nobody lowered it on purpose, restore it: sudo nvidia-smi -i {} -pl {:.0f}",
                    g.index, static_cast<double>(*def) / 1000.0)));
  }
}

void rule_power_cap_history(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty() || count_bit(g, clock_reason::kSwPowerCap) > 0) continue;
    const auto& ns = g.last()->violations.power_ns;
    if (!ns || *ns < kCapHistoryMinNs) continue;
    out.push_back(make_finding(
        "power.cap_history", Severity::kInfo, &g,
        fmt::format("{} was power-capped in the past (not now)", gpu_label(g)),
        {fmt::format("{:.0f} s of SW power capping accumulated since the driver loaded; not "
                     "active now",
                     static_cast<double>(*ns) / 1e9)}));
  }
}

}  // namespace gw
