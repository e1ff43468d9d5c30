// Rules over the load phase of doctor --stress: clocks that do not hold, a GPU lost under the
// load, CUDA errors, GPUs refused, a load stopped early or not run at all.
#include <fmt/format.h>

#include <algorithm>

#include "diagnose/context.h"
#include "diagnose/figures.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// "12,345". Appended digit by digit: GCC 12 -O2 warns (-Wrestrict) on string::insert here.
std::string grouped(unsigned v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string range_text(unsigned lo, unsigned hi, const char* unit, bool group) {
  const auto f = [&](unsigned x) { return group ? grouped(x) : std::to_string(x); };
  return lo == hi ? f(lo) + " " + unit : f(lo) + "-" + f(hi) + " " + unit;
}

struct LoadPoint {
  const GpuSample* s;
  double t;  // seconds into the load
};

std::vector<LoadPoint> load_points(const DiagnoseContext& c, unsigned gpu) {
  std::vector<LoadPoint> out;
  const GpuSeries* g = c.gpu(gpu);
  if (g == nullptr) return out;
  const int64_t t0 = c.obs.active->load_start_ms;
  for (size_t i = 0; i < g->samples.size(); ++i)
    if (g->times_ms[i] >= t0 && clock_of(*g->samples[i]))
      out.push_back({g->samples[i], static_cast<double>(g->times_ms[i] - t0) / 1000.0});
  return out;
}

// The first sample from which the clock stays below 85% of the best clock of the load.
std::optional<size_t> drop_index(const std::vector<LoadPoint>& p, unsigned best) {
  std::optional<size_t> k;
  for (size_t i = 0; i < p.size(); ++i) {
    const bool low = *clock_of(*p[i].s) < 0.85 * best;
    if (low && !k) k = i;
    if (!low) k.reset();
  }
  return k && *k > 0 ? k : std::nullopt;
}

unsigned best_clock(const std::vector<LoadPoint>& p) {
  unsigned best = 0;
  for (const auto& x : p) best = std::max(best, *clock_of(*x.s));
  return best;
}

struct Drop {
  unsigned gpu;
  unsigned best;
  LoadPoint at;
};

// "HW thermal slowdown at 87 C" / "at 87 C" when the driver names no reason.
std::string cause_text(const GpuSample& s) {
  const uint64_t bits = s.clock_reasons.value_or(0) & ~clock_reason::kGpuIdle;
  const std::string temp = s.temp_c ? fmt::format(" at {} °C", *s.temp_c) : "";
  return bits != 0 ? reasons_text(bits) + temp : "its clock falls" + temp;
}

std::vector<std::string> drop_evidence(const DiagnoseContext& c, const Drop& d,
                                       const std::vector<Drop>& all_held) {
  const GpuSample& s = *d.at.s;
  std::vector<std::string> ev{
      fmt::format("{} MHz for the first {:.0f} s of the load, {} MHz from "
                  "then on",
                  grouped(d.best), d.at.t, grouped(*clock_of(s)))};
  const GpuSeries* g = c.gpu(d.gpu);
  if (g && s.temp_c && g->info->temp_slowdown_c)
    ev.push_back(fmt::format("{} °C against a slowdown temperature of {} °C", *s.temp_c,
                             *g->info->temp_slowdown_c));
  if (s.power_mw && s.power_limit_mw)
    ev.push_back(
        fmt::format("power {} of a {} limit", watts(*s.power_mw), watts(*s.power_limit_mw)));
  if (!all_held.empty()) {
    std::vector<unsigned> ids;
    unsigned clo = ~0u, chi = 0, tlo = ~0u, thi = 0;
    for (const Drop& h : all_held) {
      ids.push_back(h.gpu);
      const unsigned clk = *clock_of(*h.at.s);
      clo = std::min(clo, clk);
      chi = std::max(chi, clk);
      const unsigned t = static_cast<unsigned>(h.at.s->temp_c.value_or(0));
      tlo = std::min(tlo, t);
      thi = std::max(thi, t);
    }
    ev.push_back(fmt::format("{} hold {} at {}", gpus_text(ids), range_text(clo, chi, "MHz", true),
                             range_text(tlo, thi, "°C", false)));
  }
  return ev;
}

}  // namespace

void rule_active_clock_drop(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  std::vector<Drop> drops, held;
  for (const ActiveGpu& a : c.obs.active->gpus) {
    if (a.refused || a.load_s <= 0) continue;
    const auto p = load_points(c, a.gpu);
    if (p.size() < 2) continue;
    const unsigned best = best_clock(p);
    if (auto k = drop_index(p, best))
      drops.push_back({a.gpu, best, p[*k]});
    else
      held.push_back({a.gpu, best, p.back()});
  }
  for (const Drop& d : drops) {
    const uint64_t bits = d.at.s->clock_reasons.value_or(0);
    const bool hw = (bits & (clock_reason::kHwThermalSlowdown | clock_reason::kHwSlowdown |
                             clock_reason::kHwPowerBrakeSlowdown)) != 0;
    out.push_back(make_finding(
        "active.clock_drop", hw ? Severity::kCritical : Severity::kWarning, c.gpu(d.gpu),
        fmt::format("GPU {} holds its clock for {:.0f} s, then {} drops it to {} MHz", d.gpu,
                    d.at.t, cause_text(*d.at.s), grouped(*clock_of(*d.at.s))),
        drop_evidence(c, d, held)));
  }
}

void rule_active_gpu_lost(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  const ActiveReport& r = *c.obs.active;
  for (const ActiveGpu& a : r.gpus) {
    if (a.refused) continue;
    for (const Snapshot& s : c.obs.samples) {
      if (s.time_ms < r.load_start_ms) continue;
      const auto it = std::find_if(s.gpus.begin(), s.gpus.end(),
                                   [&](const GpuState& g) { return g.info.index == a.gpu; });
      if (it == s.gpus.end() || it->access == GpuAccess::kOk || it->access == GpuAccess::kHung)
        continue;
      std::vector<std::string> ev{
          fmt::format("NVML reads it as {} {:.0f} s into the load", gpu_access_name(it->access),
                      static_cast<double>(s.time_ms - r.load_start_ms) / 1000.0)};
      if (a.error) ev.push_back("CUDA: " + *a.error);
      Finding f = make_finding("active.gpu_lost", Severity::kCritical, c.gpu(a.gpu),
                               fmt::format("GPU {} was lost under load", a.gpu), std::move(ev));
      f.gpu = a.gpu;
      out.push_back(std::move(f));
      break;
    }
  }
}

void rule_active_cuda_error(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  Findings lost;
  rule_active_gpu_lost(c, lost);
  for (const ActiveGpu& a : c.obs.active->gpus) {
    if (!a.error ||
        std::any_of(lost.begin(), lost.end(), [&](const Finding& f) { return f.gpu == a.gpu; }))
      continue;
    Finding f =
        make_finding("active.cuda_error", Severity::kWarning, c.gpu(a.gpu),
                     fmt::format("GPU {}: a CUDA call failed during the check", a.gpu), {*a.error});
    f.gpu = a.gpu;
    out.push_back(std::move(f));
  }
}

void rule_active_refused(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  for (const ActiveGpu& a : c.obs.active->gpus) {
    if (!a.refused) continue;
    Finding f =
        make_finding("active.refused", Severity::kInfo, c.gpu(a.gpu),
                     fmt::format("GPU {} was not loaded: it is in use", a.gpu), {*a.refused});
    f.gpu = a.gpu;
    out.push_back(std::move(f));
  }
}

void rule_active_stopped(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  const ActiveReport& r = *c.obs.active;
  if (r.stopped)
    out.push_back(make_finding("active.stopped", Severity::kWarning, nullptr,
                               "The load was stopped before its end: " + *r.stopped,
                               {*r.stopped, fmt::format("planned {:.0f} s", r.planned_s)}));
}

void rule_active_not_run(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.active) return;
  const ActiveReport& r = *c.obs.active;
  if (r.cuda_error)
    out.push_back(make_finding("active.not_run", Severity::kWarning, nullptr,
                               "No load was run: the CUDA driver could not be used",
                               {*r.cuda_error}));
}

}  // namespace gw
