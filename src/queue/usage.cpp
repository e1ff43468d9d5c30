#include "queue/usage.h"

#include <algorithm>
#include <cmath>

#include "queue/job.h"

namespace gw::queue {

double decay_to(double gpu_ms, int64_t from_ms, int64_t to_ms, int64_t half_life_ms) {
  if (half_life_ms <= 0 || to_ms <= from_ms) return gpu_ms;
  return gpu_ms *
         std::exp2(-static_cast<double>(to_ms - from_ms) / static_cast<double>(half_life_ms));
}

// The same integral as sched::FairShareLedger::advance, so both give one number.
double run_usage(unsigned gpus, int64_t start_ms, int64_t end_ms, int64_t half_life_ms) {
  if (end_ms <= start_ms) return 0;
  const double dt = static_cast<double>(end_ms - start_ms);
  if (half_life_ms <= 0) return gpus * dt;
  const double hl = static_cast<double>(half_life_ms);
  return gpus * hl / std::log(2.0) * (1.0 - std::exp2(-dt / hl));
}

Usage add_run(Usage u, unsigned gpus, int64_t start_ms, int64_t end_ms, int64_t half_life_ms) {
  const double run = run_usage(gpus, start_ms, end_ms, half_life_ms);
  const int64_t to = std::max(u.as_of_ms, end_ms);
  u.gpu_ms =
      decay_to(u.gpu_ms, u.as_of_ms, to, half_life_ms) + decay_to(run, end_ms, to, half_life_ms);
  u.as_of_ms = to;
  return u;
}

std::map<std::string, double> usage_at(const std::vector<Usage>& stored,
                                       const std::vector<JobRecord>& jobs, int64_t now_ms,
                                       int64_t half_life_ms) {
  std::map<std::string, double> out;
  for (const Usage& u : stored)
    out[u.account] += decay_to(u.gpu_ms, u.as_of_ms, now_ms, half_life_ms);
  for (const JobRecord& j : jobs)
    if (j.state == State::kRunning && j.start_ms)
      out[j.user] +=
          run_usage(static_cast<unsigned>(j.gpu_indices.size()), *j.start_ms, now_ms, half_life_ms);
  return out;
}

}  // namespace gw::queue
