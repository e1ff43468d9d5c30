// The causes a report ranks: one small function per kind, in one table. Each gives a score
// (the share of the run it explains, 0..1) and one sentence with the figures behind it.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "jobreport/jobreport.h"

namespace gw::jobreport {
namespace {

using Rule = void (*)(const JobReport&, const GpuFigures&, std::vector<Cause>&);

constexpr double kMinShare = 0.05;  // below this a cause is noise, not a reason to be slow

std::string gpu_name(const GpuFigures& g) {
  return g.index ? fmt::format("GPU {}", *g.index) : "GPU " + g.uuid;
}

std::string pct(double share) {
  return fmt::format("{:.0f} %", share * 100);
}

std::string minutes(double s) {
  return s >= 120 ? fmt::format("{:.0f} min", s / 60) : fmt::format("{:.0f} s", s);
}

const char* reason_words(const std::string& r) {
  if (r == "hw_slowdown") return "HW slowdown";
  if (r == "hw_thermal_slowdown") return "HW thermal slowdown";
  if (r == "sw_thermal_slowdown") return "SW thermal slowdown";
  if (r == "hw_power_brake") return "HW power brake";
  return "the software power cap";
}

// A GPU another job used at the same time: its figures belong to both, so say so first.
void shared(const JobReport&, const GpuFigures& g, std::vector<Cause>& out) {
  if (g.shared_with.empty()) return;
  std::string others;
  for (const std::string& j : g.shared_with) others += (others.empty() ? "" : ", ") + j;
  out.push_back({"shared_gpu", 1.0, g.index,
                 fmt::format("{} was shared with job {}: its utilization, memory, power and "
                             "energy cannot be attributed to this job alone",
                             gpu_name(g), others)});
}

void throttled(const JobReport&, const GpuFigures& g, std::vector<Cause>& out) {
  for (const ThrottleShare& t : g.throttles) {
    if (t.share < kMinShare) continue;
    // Running at the power cap under full load is the GPU doing its job; weigh it lower.
    const double weight = t.reason == "sw_power_cap" ? 0.5 : 1.0;
    std::string temp = t.mean_temp_c ? fmt::format(" ({:.0f} °C)", *t.mean_temp_c) : "";
    out.push_back({"throttle." + t.reason, t.share * weight, g.index,
                   fmt::format("{} throttled by {} {} of the run{}", gpu_name(g),
                               reason_words(t.reason), pct(t.share), temp)});
  }
}

void input_bound(const JobReport& r, const GpuFigures& g, std::vector<Cause>& out) {
  if (!g.idle_share || *g.idle_share < 0.2) return;
  std::string cpu;
  if (r.cpu_cores)
    cpu = fmt::format(" while the job's processes used {:.1f} CPU cores on average", *r.cpu_cores);
  out.push_back({"input_bound", *g.idle_share * 0.9, g.index,
                 fmt::format("input-bound: {} idle (under 10 % utilization) {} of the time{}; "
                             "the data pipeline or the CPU side does not keep it fed",
                             gpu_name(g), pct(*g.idle_share), cpu)});
}

void hung(const JobReport&, const GpuFigures& g, std::vector<Cause>& out) {
  if (g.sampled_s <= 0 || g.hang_s / g.sampled_s < kMinShare) return;
  out.push_back({"hang", std::min(1.0, g.hang_s / g.sampled_s) * 0.99, g.index,
                 fmt::format("{} looked busy (over 90 % utilization) at {:.0f} W with no memory "
                             "traffic for {}: a hang (a stuck collective or kernel), not work",
                             gpu_name(g), g.hang_power_w.value_or(0), minutes(g.hang_s))});
}

void slow_clock(const JobReport&, const GpuFigures& g, std::vector<Cause>& out) {
  if (!g.load_sm_clock_mhz || !g.max_sm_clock_mhz || *g.max_sm_clock_mhz <= 0) return;
  const double ratio = *g.load_sm_clock_mhz / *g.max_sm_clock_mhz;
  if (ratio > 0.85) return;
  out.push_back({"clock.low_under_load", (1 - ratio) * 0.5, g.index,
                 fmt::format("{} ran at {:.0f} MHz under load, {:.0f} % of its {:.0f} MHz maximum",
                             gpu_name(g), *g.load_sm_clock_mhz, ratio * 100, *g.max_sm_clock_mhz)});
}

void pcie_degraded(const JobReport&, const GpuFigures& g, std::vector<Cause>& out) {
  const bool gen = g.load_pcie_gen && g.max_pcie_gen && *g.load_pcie_gen < *g.max_pcie_gen;
  const bool width =
      g.load_pcie_width && g.max_pcie_width && *g.load_pcie_width < *g.max_pcie_width;
  if (!gen && !width) return;
  out.push_back(
      {"pcie.degraded_under_load", 0.3, g.index,
       fmt::format("{} PCIe link under load at Gen{:.0f} x{:.0f} (capable of Gen{} x{})",
                   gpu_name(g), g.load_pcie_gen.value_or(0), g.load_pcie_width.value_or(0),
                   g.max_pcie_gen.value_or(0), g.max_pcie_width.value_or(0))});
}

constexpr std::array<Rule, 6> kRules = {shared,      hung,       throttled,
                                        input_bound, slow_clock, pcie_degraded};

void event_causes(const JobReport& r, std::vector<Cause>& out) {
  for (const EventLine& e : r.events) {
    if (e.kind != "xid" && e.kind != "gpu_lost" && e.kind != "fallen_off_bus") continue;
    const std::string what =
        e.code ? fmt::format("{} {}", e.kind == "xid" ? "Xid" : e.kind, *e.code) : e.kind;
    out.push_back(
        {"event." + e.kind, 0.9, e.gpu,
         fmt::format("{} on {} {:.0f} s after the job started: {}", what,
                     e.gpu ? fmt::format("GPU {}", *e.gpu) : "the host", e.t_rel_s, e.message)});
  }
}

}  // namespace

std::vector<Cause> rank_causes(const JobReport& r) {
  std::vector<Cause> out;
  for (const GpuFigures& g : r.gpus)
    for (Rule rule : kRules) rule(r, g, out);
  event_causes(r, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const Cause& a, const Cause& b) { return a.score > b.score; });
  return out;
}

}  // namespace gw::jobreport
