// JSON rendering of a SimReport, schema "gpuwarden.simulate/1" (docs/traces.md#json).
#include <nlohmann/json.hpp>

#include "sim/render.h"
#include "sim/render_failures.h"

namespace gw::sim {
namespace {

using ojson = nlohmann::ordered_json;

ojson series(const std::vector<SeriesPoint>& pts) {
  ojson a = ojson::array();
  for (const SeriesPoint& p : pts) a.push_back(ojson::array({p.t_s, p.value}));
  return a;
}

ojson policy(const PolicyResult& p) {
  ojson j;
  j["policy"] = p.policy;
  j["jobs"] = p.jobs;
  j["jobs_finished"] = p.jobs_finished;
  j["jct_mean_s"] = p.jct_mean_s;
  j["jct_median_s"] = p.jct_median_s;
  j["jct_p95_s"] = p.jct_p95_s;
  j["jct_p99_s"] = p.jct_p99_s;
  j["queue_mean_s"] = p.queue_mean_s;
  j["queue_median_s"] = p.queue_median_s;
  j["queue_p95_s"] = p.queue_p95_s;
  j["queue_p99_s"] = p.queue_p99_s;
  j["gpu_utilization"] = p.gpu_utilization;
  j["makespan_s"] = p.makespan_s;
  j["jain_fairness"] = p.jain_fairness;
  j["finish_time_fairness"] =
      p.finish_time_fairness ? ojson(*p.finish_time_fairness) : ojson(nullptr);
  j["hol_blocking_s"] = p.hol_blocking_s;
  j["goodput"] = p.goodput;
  j["interruptions"] = p.interruptions;
  j["preemptions"] = p.preemptions;
  j["wall_time_s"] = p.wall_time_s;
  render_detail::add_policy_failures(j, p);
  j["jct_s"] = p.jct_s;
  j["utilization"] = series(p.utilization);
  j["queue_length"] = series(p.queue_length);
  return j;
}

}  // namespace

std::string render_json(const SimReport& r) {
  ojson j;
  j["schema"] = "gpuwarden.simulate/1";
  j["trace"] = r.trace;
  j["cluster"] = r.cluster;
  j["seed"] = r.seed;
  j["notes"] = r.notes;
  j["policies"] = ojson::array();
  for (const PolicyResult& p : r.policies) j["policies"].push_back(policy(p));
  render_detail::add_failure_model(j, r);
  // One flat array of per-job records, `policy` on each (docs/simulate.md#per-job-output).
  ojson jobs = ojson::array();
  for (const PolicyResult& p : r.policies)
    for (const JobRecord& x : p.job_records) {
      ojson o;
      o["policy"] = p.policy;
      o["job_id"] = x.id;
      o["source_line"] = x.source_line;
      o["account"] = x.account;
      o["gpus"] = x.gpus;
      o["submit_s"] = x.submit_s;
      o["first_start_s"] = x.first_start_s ? ojson(*x.first_start_s) : ojson(nullptr);
      o["end_s"] = x.end_s ? ojson(*x.end_s) : ojson(nullptr);
      o["state"] = x.state;
      o["preemptions"] = x.preemptions;
      o["interruptions"] = x.interruptions;
      o["nodes"] = x.nodes;
      o["gpus_allocated"] = x.gpus_allocated;
      o["useful_s"] = x.useful_s;
      o["effective_training_time"] =
          x.effective_training_time ? ojson(*x.effective_training_time) : ojson(nullptr);
      jobs.push_back(std::move(o));
    }
  j["jobs"] = std::move(jobs);
  // Replace invalid UTF-8 instead of throwing: trace names come from user paths.
  return j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace gw::sim
