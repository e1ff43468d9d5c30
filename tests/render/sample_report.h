// A hand-made SimReport shared by the renderer tests.
#pragma once

#include <cmath>

#include "sim/report.h"

namespace gw::sim::testing {

inline PolicyResult sample_policy(std::string name, double scale) {
  PolicyResult p;
  p.policy = std::move(name);
  p.jobs = 1000;
  p.jobs_finished = 990;
  p.jct_mean_s = 5400 * scale;
  p.jct_median_s = 1200 * scale;
  p.jct_p95_s = 36000 * scale;
  p.jct_p99_s = 90000 * scale;
  p.queue_mean_s = 600 * scale;
  p.queue_median_s = 30 * scale;
  p.queue_p95_s = 4000 * scale;
  p.queue_p99_s = 9000 * scale;
  p.gpu_utilization = 0.8 + 0.1 * (1 - scale);
  p.makespan_s = 86400 * 3;
  p.jain_fairness = 0.9;
  p.hol_blocking_s = 120 * scale;
  p.goodput = 0.97;
  p.preemptions = 3;
  p.wall_time_s = 0.25;
  for (int i = 0; i < 990; ++i)
    p.jct_s.push_back(30.0 * scale * std::exp(static_cast<double>(i) / 90.0));
  for (int t = 0; t <= 200; ++t) {
    const double ts = t * 1296.0;
    p.utilization.push_back({ts, std::min(1.0, 0.5 + 0.4 * std::sin(t / (10.0 * scale)))});
    p.queue_length.push_back({ts, std::floor(20 * scale * (1 + std::cos(t / 15.0)))});
  }
  return p;
}

inline SimReport sample_report() {
  SimReport r;
  r.trace = "philly-sia (shared/traces/philly-sia/philly.csv)";
  r.cluster = "Philly VCs: 352 nodes x 8 GPUs";
  r.seed = 42;
  r.notes = {"rows were not in submit order: sorted by submit time (stable)",
             "note with <script>alert(1)</script> & \"quotes\""};
  r.policies.push_back(sample_policy("fcfs", 1.0));
  r.policies.push_back(sample_policy("fcfs+backfill", 0.7));
  r.policies.push_back(sample_policy("fair<share>", 0.85));
  r.policies[2].finish_time_fairness = 1.8;
  return r;
}

}  // namespace gw::sim::testing
