// The share step's rules (share.h), one check per rule, each naming what stopped it.
#include "queue/share.h"

#include <fmt/format.h>

#include <algorithm>

namespace gw::queue {
namespace {

std::string gib(uint64_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ULL << 30));
}

// Why this GPU cannot take the job now; empty when it can.
std::string blocker(const ShareAsk& ask, const ShareGpu& g, const ShareRules& rules,
                    int64_t now_ms) {
  if (!g.open) return "not available";
  if (g.jobs == 0) return "idle (taken whole)";
  if (!g.all_declared) return "runs a job without --gpu-mem";
  if (!g.total || !g.used) return "its memory use is not known";
  const int64_t ran = now_ms - g.newest_start_ms;
  if (ran < rules.warmup_ms)
    return fmt::format("warming up (a job started {:.0f} s ago, {:.0f} s needed)",
                       static_cast<double>(ran) / 1000.0,
                       static_cast<double>(rules.warmup_ms) / 1000.0);
  const uint64_t free = *g.total > *g.used ? *g.total - *g.used : 0;
  if (free < ask.mem) return fmt::format("{} free, {} needed", gib(free), gib(ask.mem));
  if (g.declared + ask.mem > *g.total)
    return fmt::format("{} already promised of {}", gib(g.declared), gib(*g.total));
  if (rules.whole_gpu_job_waits && ask.planned_end_ms > g.planned_end_ms)
    return "a job waiting for whole GPUs would be delayed";
  return {};
}

}  // namespace

SharePlan plan_share(const ShareAsk& ask, const std::vector<ShareGpu>& gpus,
                     const ShareRules& rules, int64_t now_ms) {
  std::vector<std::pair<uint64_t, unsigned>> fits;  // (free memory, GPU)
  std::string notes;
  for (const ShareGpu& g : gpus) {
    const std::string why = blocker(ask, g, rules, now_ms);
    if (why.empty()) {
      fits.emplace_back(*g.total - *g.used, g.index);
      continue;
    }
    if (g.open && g.jobs > 0)
      notes += fmt::format("{}GPU {} {}", notes.empty() ? "" : "; ", g.index, why);
  }
  SharePlan plan;
  if (fits.size() < ask.gpus) {
    plan.why_not = notes.empty() ? "no GPU runs a job that shares" : "cannot share: " + notes;
    return plan;
  }
  std::sort(fits.begin(), fits.end());
  for (unsigned k = 0; k < ask.gpus; ++k) plan.gpus.push_back(fits[k].second);
  return plan;
}

void take_share(std::vector<ShareGpu>& gpus, const SharePlan& plan, const ShareAsk& ask,
                int64_t job_id, int64_t now_ms) {
  for (ShareGpu& g : gpus) {
    if (std::find(plan.gpus.begin(), plan.gpus.end(), g.index) == plan.gpus.end()) continue;
    ++g.jobs;
    g.declared += ask.mem;
    g.newest_start_ms = now_ms;
    g.planned_end_ms = std::max(g.planned_end_ms, ask.planned_end_ms);
    g.job_ids.push_back(job_id);
  }
}

}  // namespace gw::queue
