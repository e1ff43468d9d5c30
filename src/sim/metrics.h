// Turns a simulation's per-job outcomes into the PolicyResult numbers (report.h). Definitions
// are in docs/simulate.md; in short:
//  - JCT = end - submit of finished jobs; queueing delay = first start - submit.
//  - Jain's fairness over tenants of x_t = mean over the tenant's finished jobs of runtime/JCT.
//  - Finish-time fairness: per tenant the mean of JCT / T_alone, where T_alone is the job's
//    runtime on an idle cluster share of total_gpus x (tenant's normalised shares), stretched
//    by gpus/share when the job is wider than the share; the result is the worst tenant's.
#pragma once

#include <cstdint>
#include <string>
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

// Fills the job-derived fields of `r` (counts, JCT, queueing, fairness).
void fill_job_metrics(PolicyResult& r, const JobTable& out, unsigned total_gpus,
                      const std::vector<std::pair<std::string, double>>& shares);

}  // namespace gw::sim
