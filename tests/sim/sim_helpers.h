// Small builders shared by the simulator tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <span>
#include <string>
#include <vector>

#include "sched/cluster.h"
#include "sim/engine.h"

namespace gw::sim::test {

// A job submitted at `submit_s` needing `gpus` for `run_s` seconds; its limit is exact
// unless given.
inline sched::JobSpec job(sched::JobId id, double submit_s, unsigned gpus, double run_s,
                          std::string account = "a", double limit_s = -1) {
  sched::JobSpec s;
  s.id = id;
  s.account = std::move(account);
  s.gpus = gpus;
  s.submit_ms = static_cast<int64_t>(submit_s * 1000);
  s.actual_runtime_ms = static_cast<int64_t>(run_s * 1000);
  s.time_limit_ms = static_cast<int64_t>((limit_s < 0 ? run_s : limit_s) * 1000);
  s.qos = "normal";
  return s;
}

inline SimOutcome run(std::span<const sched::JobSpec> jobs, const sched::Cluster& cluster,
                      const std::string& policy, const SimOptions& options = {}) {
  auto out = run_simulation(jobs, cluster, policy, options);
  EXPECT_TRUE(out) << (out ? "" : out.error().to_string());
  return out ? std::move(*out) : SimOutcome{};
}
inline SimOutcome run(const std::vector<sched::JobSpec>& jobs, const sched::Cluster& cluster,
                      const std::string& policy, const SimOptions& options = {}) {
  return run(std::span<const sched::JobSpec>(jobs), cluster, policy, options);
}

// Job id -> first start (s), and -> end (s).
inline std::map<sched::JobId, double> starts(const SimOutcome& o) {
  std::map<sched::JobId, double> m;
  for (const auto& j : o.jobs)
    m[j.id] = j.first_start_ms ? static_cast<double>(*j.first_start_ms) / 1000.0 : -1;
  return m;
}
inline std::map<sched::JobId, double> ends(const SimOutcome& o) {
  std::map<sched::JobId, double> m;
  for (const auto& j : o.jobs) m[j.id] = j.end_ms ? static_cast<double>(*j.end_ms) / 1000.0 : -1;
  return m;
}

using Times = std::map<sched::JobId, double>;

}  // namespace gw::sim::test
