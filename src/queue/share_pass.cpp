// The share step of a pass: after the scheduler has placed what fits on whole GPUs, waiting
// jobs that stated --gpu-mem may join GPUs whose jobs share (rules in share.h).
#include <algorithm>
#include <tuple>

#include "queue/service.h"
#include "queue/share.h"
#include "sched/scheduler.h"

namespace gw::queue {
namespace {

// The scheduler's planning estimate for a job with no time limit, so both plan alike.
int64_t planned_end(const JobRecord& j, int64_t from_ms) {
  return from_ms + j.time_limit_ms.value_or(sched::SchedulerOptions{}.default_time_limit_ms);
}

std::vector<ShareGpu> share_view(const std::vector<GpuView>& gpus,
                                 const std::vector<JobRecord>& active,
                                 const std::set<unsigned>& open) {
  std::vector<ShareGpu> out;
  for (const GpuView& v : gpus) {
    ShareGpu g;
    g.index = v.index;
    g.open = open.count(v.index) > 0 && !v.exclusive;
    g.total = v.mem_total;
    g.used = v.mem_used;
    for (const JobRecord& j : active) {
      if (j.state != State::kRunning ||
          std::find(j.gpu_indices.begin(), j.gpu_indices.end(), v.index) == j.gpu_indices.end())
        continue;
      ++g.jobs;
      g.all_declared = g.all_declared && j.gpu_mem_bytes.has_value();
      g.declared += j.gpu_mem_bytes.value_or(0);
      const int64_t start = j.start_ms.value_or(0);
      g.newest_start_ms = std::max(g.newest_start_ms, start);
      g.planned_end_ms = std::max(g.planned_end_ms, planned_end(j, start));
      g.job_ids.push_back(j.id);
    }
    out.push_back(std::move(g));
  }
  return out;
}

// The order sharers are considered in, after the policy's own key where the queue can know
// it without the scheduler: fair share by the user's usage, priority by priority, then
// submission order.
void share_order(std::vector<JobRecord*>& waiting, const std::string& policy,
                 const std::map<std::string, double>& usage) {
  const bool fair = policy.find("fairshare") != std::string::npos;
  const bool prio = policy.find("priority") != std::string::npos;
  const auto key = [&](const JobRecord* j) {
    const auto u = usage.find(j->user);
    return std::tuple(fair && u != usage.end() ? u->second : 0.0, prio ? -j->priority : 0,
                      j->submit_ms, j->id);
  };
  std::stable_sort(waiting.begin(), waiting.end(),
                   [&](const JobRecord* a, const JobRecord* b) { return key(a) < key(b); });
}

}  // namespace

std::set<unsigned> QueueService::open_gpus(const std::vector<unsigned>& usable,
                                           const std::vector<Drain>& drains,
                                           const std::set<unsigned>& foreign) const {
  std::set<unsigned> out(usable.begin(), usable.end());
  for (const Drain& d : drains) out.erase(d.gpu);
  for (unsigned g : foreign) out.erase(g);
  for (const GpuView& v : gpus_)
    if (!v.unschedulable.empty()) out.erase(v.index);
  return out;
}

// Both sides of a shared GPU remember each other: their reports cannot split its figures.
void QueueService::note_sharers(JobRecord& j, const std::vector<ShareGpu>& gpus,
                                std::vector<JobRecord>& running) {
  for (const ShareGpu& g : gpus) {
    if (std::find(j.gpu_indices.begin(), j.gpu_indices.end(), g.index) == j.gpu_indices.end())
      continue;
    for (int64_t other : g.job_ids) {
      j.shared_with.push_back({g.index, other});
      for (JobRecord& o : running)
        if (o.id == other) {
          o.shared_with.push_back({g.index, j.id});
          (void)db_->update(o);
        }
    }
  }
  (void)db_->update(j);
}

void QueueService::share_waiting(std::vector<JobRecord>& running, const std::set<unsigned>& open) {
  std::vector<JobRecord> waiting;  // copies: starting one updates the database's
  bool whole_waits = false;
  for (const auto& [id, j] : db_->active_jobs()) {
    if (j.state != State::kPending || !scheduler_knows(id)) continue;
    if (j.gpu_mem_bytes)
      waiting.push_back(j);
    else
      whole_waits = true;
  }
  if (waiting.empty()) return;
  const ShareRules rules{opts_.share_warmup_ms, whole_waits};
  std::vector<ShareGpu> gpus = share_view(gpus_, running, open);
  std::vector<JobRecord*> order;
  for (JobRecord& j : waiting) order.push_back(&j);
  share_order(order, opts_.policy, usage_now(running));
  const int64_t now = clock_.now_ms();
  for (JobRecord* j : order) {
    const ShareAsk ask{j->gpus, *j->gpu_mem_bytes, planned_end(*j, now)};
    const SharePlan plan = plan_share(ask, gpus, rules, now);
    if (plan.gpus.empty()) {
      share_notes_[j->id] = plan.why_not;
      continue;
    }
    start(*j, plan.gpus);
    sched_dirty_ = true;  // the scheduler still has it waiting, and not on these GPUs
    if (j->state != State::kRunning) continue;
    note_sharers(*j, gpus, running);
    take_share(gpus, plan, ask, j->id, now);
    running.push_back(*j);
  }
}

}  // namespace gw::queue
