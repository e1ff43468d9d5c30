// VRAM rules: memory close to capacity (out-of-memory risk) and memory held by idle processes.
#include <fmt/format.h>

#include <algorithm>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// 90 %: PyTorch's caching allocator needs headroom for fragmentation and peak activations; above
// 90 % a larger batch or a longer sequence typically ends in CUDA out-of-memory. Fixture 017
// (89.7 % at 65 % util) deliberately stays just under it.
constexpr double kNearFullRatio = 0.90;
// Half the card held while nothing runs is a forgotten notebook kernel or a stuck job; desktop
// sessions hold a few hundred MiB (fixture 006), which stays well below.
constexpr double kHeldIdleRatio = 0.50;

std::string process_list(const GpuSample& s) {
  if (!s.processes || s.processes->empty()) return {};
  std::vector<ProcessInfo> procs = *s.processes;
  std::sort(procs.begin(), procs.end(), [](const ProcessInfo& a, const ProcessInfo& b) {
    return a.used_mem_bytes.value_or(0) > b.used_mem_bytes.value_or(0);
  });
  std::string out = "held by ";
  size_t shown = 0;
  for (const ProcessInfo& p : procs) {
    if (shown == 3) {
      out += fmt::format(" and {} more", procs.size() - shown);
      break;
    }
    if (shown > 0) out += ", ";
    out += fmt::format("pid {}", p.pid);
    if (p.name) out += " (" + *p.name + ")";
    if (p.used_mem_bytes) out += " " + mib(*p.used_mem_bytes);
    ++shown;
  }
  return out;
}

}  // namespace

void rule_memory_near_full(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    double peak = 0;
    const GpuSample* at = nullptr;
    for (const GpuSample* s : g.samples) {
      const auto total = mem_total(g, *s);
      if (!total || !s->mem_used_bytes) continue;
      const double r = static_cast<double>(*s->mem_used_bytes) / static_cast<double>(*total);
      if (r > peak) {
        peak = r;
        at = s;
      }
    }
    if (!at || peak < kNearFullRatio) continue;
    std::vector<std::string> ev{fmt::format("{} of {} used ({}), threshold {}",
                                            mib(*at->mem_used_bytes), mib(*mem_total(g, *at)),
                                            pct(peak), pct(kNearFullRatio))};
    if (at->util_gpu_pct) ev.push_back(fmt::format("GPU utilization {}%", *at->util_gpu_pct));
    if (auto p = process_list(*at); !p.empty()) ev.push_back(std::move(p));
    out.push_back(make_finding(
        "memory.near_full", Severity::kWarning, &g,
        fmt::format("{} memory is {} full: out-of-memory risk", gpu_label(g), pct(peak)),
        std::move(ev)));
  }
}

void rule_memory_held_by_idle(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    // Idle in every sample: one busy moment means the memory is in use.
    if (count_if(g, is_idle) != g.samples.size()) continue;
    const GpuSample& s = *g.last();
    const auto total = mem_total(g, s);
    if (!total || !s.mem_used_bytes) continue;
    const double r = static_cast<double>(*s.mem_used_bytes) / static_cast<double>(*total);
    if (r < kHeldIdleRatio) continue;
    const std::string util = s.util_gpu_pct ? fmt::format("GPU utilization is {}%", *s.util_gpu_pct)
                                            : std::string("the Idle clock reason is active");
    std::vector<std::string> ev{fmt::format("{} of {} ({}) held while {} {}",
                                            mib(*s.mem_used_bytes), mib(*total), pct(r), util,
                                            share_text(g.samples.size(), g.samples.size()))};
    if (auto p = process_list(s); !p.empty()) ev.push_back(std::move(p));
    if (g.samples.size() == 1) {
      // One reading cannot tell a stale holder from a job that waits between steps (data
      // loading, a collective): give both and the check that separates them.
      ev.push_back(
          "a single snapshot: either a stale holder (a finished job or notebook kernel that "
          "keeps its memory) or a job starving on its input between steps");
      out.push_back(make_finding(
          "memory.held_by_idle", Severity::kWarning, &g,
          fmt::format("{} holds {} of its memory while idle in this snapshot", gpu_label(g),
                      pct(r)),
          std::move(ev),
          "Sample over time to tell them apart: gpuwarden doctor --window 60 (or nvidia-smi "
          "dmon -s u -d 1 for a minute). Utilization that stays at 0% means a stale holder: "
          "stop it (nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv). Bursts "
          "between idle gaps mean a starving job: more DataLoader workers, pinned memory, "
          "prefetching."));
      continue;
    }
    out.push_back(
        make_finding("memory.held_by_idle", Severity::kWarning, &g,
                     fmt::format("{} memory is held by processes that do no work", gpu_label(g)),
                     std::move(ev)));
  }
}

}  // namespace gw
