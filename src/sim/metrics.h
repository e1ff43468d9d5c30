// Turns a simulation's per-job outcomes into the PolicyResult numbers (report.h). Definitions
// are in docs/simulate.md; in short:
//  - JCT = end - submit of finished jobs; queueing delay = first start - submit.
//  - Jain's fairness over tenants of x_t = mean over the tenant's finished jobs of runtime/JCT.
//  - Finish-time fairness: per tenant the mean of JCT / T_alone, where T_alone is the job's
//    runtime on an idle cluster share of total_gpus x (tenant's normalised shares), stretched
//    by gpus/share when the job is wider than the share; the result is the worst tenant's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/report.h"

namespace gw::sim {

double percentile(std::vector<double> values, double p);  // linear interpolation, p in [0,100]
double jain_index(const std::vector<double>& x);

// Step-function samples (time, value) reduced to at most `points` time-weighted bin means.
std::vector<SeriesPoint> downsample(const std::vector<std::pair<int64_t, double>>& steps,
                                    int64_t t0_ms, int64_t t_end_ms, size_t points);

struct TenantShare {
  std::string account;
  double shares = 1;
};

// The job-derived fields of a PolicyResult (counts, JCT, queueing, fairness, effective
// training time), folded one job at a time in submit order: a replay that keeps no per-job
// output folds each job as it ends and forgets it, and one that keeps them folds the same jobs
// in the same order at the end, so the figures are equal to the last bit either way.
class JobMetricsFold {
 public:
  // `tenants`: every account of the replay's jobs (their shares normalise the finish-time
  // fairness, so they must be known before the first job is folded).
  JobMetricsFold(unsigned total_gpus, const std::vector<std::pair<std::string, double>>& shares,
                 const std::vector<std::string_view>& tenants);
  // `t_end`: the run's end, the end of a job that has none (still running at the horizon).
  void add(const JobOutcome& j, std::string_view account, int64_t t_end);
  void fill(PolicyResult& r);

 private:
  struct Tenant {
    double share = 1, speed = 0, ftf = 0;
    size_t n = 0;
  };
  unsigned total_gpus_;
  double total_shares_ = 0;
  std::map<std::string, Tenant, std::less<>> tenants_;
  std::vector<double> jct_s_, queue_s_;
  size_t jobs_ = 0, interruptions_ = 0, preemptions_ = 0;
  double ett_num_ = 0, ett_den_ = 0;  // GPU-weighted useful and elapsed time
};

}  // namespace gw::sim
