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
  start_on(i, gpus, started_ms, "adopted");
  for (uint32_t g : gpus) mark_node(cluster_.gpu(g).node);
  return {};
}

}  // namespace gw::sched
