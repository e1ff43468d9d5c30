// Scheduler::adopt_running: the live queue rebuilds one pass's state from its database, where
// some jobs already run on known GPUs (sched is pure: the queue owns the processes).
#include <algorithm>
#include <string>

#include "sched/scheduler.h"

namespace gw::sched {

Status Scheduler::adopt_running(JobSpec spec, const std::vector<uint32_t>& gpus,
                                int64_t started_ms) {
  const JobId id = spec.id;
  const std::string where = "job " + std::to_string(id);
  for (uint32_t g : gpus)
    if (g >= cluster_.gpu_count() || cluster_.gpu(g).job != 0 ||
        cluster_.gpu(g).health != GpuHealth::kOk)
      return make_error("sched.adopt_conflict",
                        "GPU " + std::to_string(g) + " is unknown, unhealthy or already held",
                        where);
  if (gpus.size() != spec.gpus)
    return make_error("sched.adopt_conflict", "GPU count differs from the request", where);
  spec.depends_on.clear();
  if (Status s = submit(std::move(spec)); !s) return s;
  const size_t i = index_.at(id);
  queue_erase(i);
  Job& j = at(i);
  cluster_.allocate(id, gpus);
  for (uint32_t g : gpus) gpu_owner_[g] = static_cast<uint32_t>(i);
  j.gpus = gpus;
  (void)j.transition(JobState::kRunning, started_ms, "adopted");
  victim_ok_[i] = 1;
  if (rank_cache())
    cache_rank(i, clock_.now_ms());
  else
    set_run_rank(i, run_rank_[i]);
  const std::pair<int64_t, size_t> entry{expected_end_ms(j), i};
  running_.insert(std::upper_bound(running_.begin(), running_.end(), entry), entry);
  ledger_.job_started(j.spec.account, static_cast<unsigned>(j.gpus.size()));
  for (uint32_t g : gpus) mark_node(cluster_.gpu(g).node);
  return {};
}

}  // namespace gw::sched
