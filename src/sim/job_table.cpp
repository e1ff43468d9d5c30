#include <string>

#include "sim/report.h"

namespace gw::sim {

JobRecord JobTable::operator[](size_t i) const {
  if (i >= jobs.size()) return refused.at(i - jobs.size());
  const JobOutcome& j = jobs[i];
  const auto secs = [](int64_t ms) { return static_cast<double>(ms) / 1000.0; };
  JobRecord r;
  r.id = j.id;
  r.source_line = j.source_line;
  r.account = account_of(j);
  r.gpus = j.gpus;
  r.submit_s = secs(j.submit_ms);
  if (j.first_start_ms) r.first_start_s = secs(*j.first_start_ms);
  if (j.end_ms) r.end_s = secs(*j.end_ms);
  r.state = std::string(sched::to_string(j.state));
  r.preemptions = j.preemptions;
  r.interruptions = j.interruptions;
  const auto held = nodes_of(j);
  r.nodes.assign(held.begin(), held.end());
  r.gpus_allocated = j.allocated;
  r.useful_s = secs(j.useful_ms);
  r.effective_training_time = j.effective_training_time;
  return r;
}

}  // namespace gw::sim
