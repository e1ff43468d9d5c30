// The epilog's report until the per-job report module (src/jobreport, branch queue) is merged:
// the findings on the job's GPUs during its run, from the daemon (active and cleared) or from
// one snapshot at its end, as a text report and one AdminComment line.
#pragma once

#include <optional>
#include <string>

#include "slurm/check_config.h"
#include "slurm/job_hooks.h"
#include "slurm/node_check.h"

namespace gw::slurm {

struct JobSummaryInput {
  JobEnv job;
  std::optional<int64_t> start_ms;
  int64_t end_ms = 0;
};

struct JobSummary {
  std::string report;  // several lines, for the user
  std::string line;    // "gpuwarden: GPUs 0,1 85s: 1 critical (GPU 0 xid.hardware)"
};

JobSummary summarize_job(const CheckConfig& c, const JobSummaryInput& in,
                         const CheckRequest& request);

}  // namespace gw::slurm
