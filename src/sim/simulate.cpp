#include "sim/simulate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/text_safety.h"
#include "sim/failure_check.h"
#include "sim/metrics.h"

namespace gw::sim {

sched::Cluster build_cluster(const ClusterSpec& spec) {
  return sched::Cluster::uniform(spec.nodes, spec.gpus_per_node, 2, 2);
}

std::string describe_cluster(const ClusterSpec& spec) {
  std::string s = fmt::format("{} nodes x {} GPUs ({} GPUs)", spec.nodes, spec.gpus_per_node,
                              spec.total_gpus());
  if (!spec.gpu_model.empty()) s += " " + spec.gpu_model;
  return s;
}

namespace {

SimOptions with_shares(const SimConfig& config) {
  SimOptions o = config.options;
  if (o.scheduler.fairshare.shares.empty()) o.scheduler.fairshare.shares = config.cluster.shares;
  return o;
}

// Work the trace offers per unit of cluster capacity over its submit span: the number that
// says whether policies can differ at all (without queues every policy starts jobs at once).
std::optional<std::string> offered_load_note(const Trace& trace, const ClusterSpec& cluster) {
  double gpu_ms = 0;
  int64_t span_ms = 0;
  for (const auto& j : trace.jobs) {
    gpu_ms += static_cast<double>(j.actual_runtime_ms.value_or(0)) * j.gpus;
    span_ms = std::max(span_ms, j.submit_ms);
  }
  if (span_ms <= 0 || gpu_ms <= 0) return std::nullopt;
  const double load = gpu_ms / (static_cast<double>(span_ms) * cluster.total_gpus());
  std::string note = fmt::format(
      "offered load: {:.0f}% of the cluster's GPU-time over the submit span", load * 100);
  if (load < 0.5) note += " (little queueing: policies differ only under load; try fewer --nodes)";
  return note;
}

JobRecord refused_record(const sched::JobSpec& j) {
  JobRecord r;
  r.id = j.id;
  r.source_line = j.source_line;
  r.account = j.account;
  r.gpus = j.gpus;
  r.submit_s = static_cast<double>(j.submit_ms) / 1000.0;
  r.state = "refused";
  return r;
}

// The engine keeps a slot per GPU (node, index, socket, switch, health, job: 24 bytes) plus
// per-node free-GPU buckets: a cluster beyond this is refused up front rather than let the
// allocation abort the process (--nodes 1000000 --gpus-per-node 1024 would need ~25 GB).
// 4 Mi GPUs took 350 MB of peak RSS in all (measured, docs/simulate.md) and is ten times the
// largest cluster built so far.
constexpr uint64_t kMaxClusterGpus = uint64_t{1} << 22;

Status check_cluster_size(const ClusterSpec& c) {
  const uint64_t gpus = uint64_t{c.nodes} * c.gpus_per_node;
  if (gpus == 0)
    return make_error("sim.empty_cluster", "the cluster has no GPUs", "--nodes/--gpus-per-node");
  if (gpus <= kMaxClusterGpus) return {};
  return make_error("sim.cluster_too_large",
                    fmt::format("{} nodes x {} GPUs = {} GPUs is more than the simulator models "
                                "(at most {} GPUs, kept one slot each in memory); give fewer "
                                "--nodes or --gpus-per-node",
                                c.nodes, c.gpus_per_node, gpus, kMaxClusterGpus),
                    "--nodes/--gpus-per-node");
}

// Refused: wider than the cluster, or neither a run time nor a limit to run for.
bool replayable(const sched::JobSpec& j, unsigned total_gpus) {
  return j.gpus <= total_gpus && (j.actual_runtime_ms || j.time_limit_ms);
}

}  // namespace

Result<PreparedJobs> prepare_jobs(const Trace& trace, const ClusterSpec& cluster) {
  PreparedJobs p;
  const unsigned total = cluster.total_gpus();
  const bool as_read = std::all_of(trace.jobs.begin(), trace.jobs.end(), [&](const auto& j) {
    return replayable(j, total) && j.actual_runtime_ms;
  });
  if (as_read) {
    p.jobs = trace.jobs;
    return p;
  }
  p.kept.reserve(trace.jobs.size());
  size_t too_wide = 0, modelled = 0, no_runtime = 0;
  unsigned widest = 0;
  std::string first_wide, first_missing;
  for (const sched::JobSpec& j : trace.jobs) {
    if (j.gpus > total) {
      ++too_wide;
      widest = std::max(widest, j.gpus);
      if (first_wide.empty()) first_wide = fmt::format("job {} (line {})", j.id, j.source_line);
      p.refused.push_back(refused_record(j));
      continue;
    }
    if (!j.actual_runtime_ms) {
      if (!j.time_limit_ms) {
        ++no_runtime;
        if (first_missing.empty())
          first_missing = fmt::format("job {} (line {})", j.id, j.source_line);
        p.refused.push_back(refused_record(j));
        continue;
      }
      ++modelled;
      sched::JobSpec m = j;
      m.actual_runtime_ms = j.time_limit_ms;
      p.kept.push_back(std::move(m));
      continue;
    }
    p.kept.push_back(j);
  }
  p.jobs = p.kept;
  if (!trace.jobs.empty() && no_runtime == trace.jobs.size())
    return make_error("sim.no_runtimes",
                      "the trace gives no job a run time or time limit, so a replay has nothing "
                      "to measure (JCTs would all be 0); use a trace with durations",
                      trace.path);
  if (too_wide)
    p.notes.push_back(fmt::format(
        "{} jobs ask for more GPUs than the simulated cluster's {} (widest {}, first {}): "
        "refused, not replayed; give more --nodes or --gpus-per-node to replay them",
        too_wide, total, widest, first_wide));
  if (no_runtime)
    p.notes.push_back(fmt::format(
        "{} jobs have neither a run time nor a time limit (first {}): refused, not replayed",
        no_runtime, first_missing));
  if (modelled)
    p.notes.push_back(fmt::format(
        "{} jobs have no run time: modelled as running for their whole time limit", modelled));
  return p;
}

Result<SimReport> simulate_policies(const Trace& trace, const SimConfig& config) {
  if (Status ok = check_cluster_size(config.cluster); !ok) return ok.error();
  if (Status ok = validate_failure_options(config.options.failure); !ok) return ok.error();
  if (Status ok = check_feasible(trace.jobs, config.cluster.gpus_per_node, config.options.failure);
      !ok)
    return ok.error();
  SimReport report;
  report.trace = trace.name + " (" + trace.path + ")";
  report.cluster = describe_cluster(config.cluster);
  report.seed = config.options.seed;
  report.notes = trace.notes;
  if (auto load = offered_load_note(trace, config.cluster)) report.notes.push_back(*load);
  auto prepared = prepare_jobs(trace, config.cluster);
  if (!prepared) return prepared.error();
  report.notes.insert(report.notes.end(), prepared->notes.begin(), prepared->notes.end());
  const sched::SchedulerOptions& so = config.options.scheduler;
  report.notes.push_back(fmt::format(
      "placement: {}", sched::to_string(sched::Placement{so.packing, so.instance_gpus})));
  const sched::Cluster cluster = build_cluster(config.cluster);
  const SimOptions options = with_shares(config);
  bool noted_rejects = false;
  for (const std::string& name : config.policies) {
    auto out = run_simulation(prepared->jobs, cluster, name, options);
    if (!out) return out.error();
    JobTable& table = out->result.job_records;
    table = std::move(static_cast<JobTable&>(*out));
    table.refused = prepared->refused;
    if (!noted_rejects && !out->rejected.empty()) {
      noted_rejects = true;
      report.notes.push_back(fmt::format("{} jobs refused by the scheduler (first: {})",
                                         out->rejected.size(), out->rejected.front()));
    }
    if (out->stop_note) report.notes.push_back(*out->stop_note);
    report.policies.push_back(std::move(out->result));
  }
  const FailureOptions& f = config.options.failure;
  if (has_failures(f)) {
    report.notes.push_back(fmt::format(
        "failures: {} classes, repair {} min, checkpoint every {} min costing {} s, "
        "restart {} s, {}",
        effective_classes(f).size(), f.repair_ms / 60000, f.checkpoint_interval_ms / 60000,
        f.checkpoint_cost_ms / 1000, f.restart_overhead_ms / 1000,
        f.requeue ? "failed jobs requeued" : "failed jobs not requeued"));
    report.failure_model = failure_model_report(f);
  }
  return report;
}

namespace {

// GPU-weighted mean width: the job size a random GPU-hour of work belongs to.
unsigned reference_width(const Trace& trace) {
  double num = 0, den = 0;
  for (const auto& j : trace.jobs) {
    const double w = static_cast<double>(j.actual_runtime_ms.value_or(0)) * j.gpus;
    num += w * j.gpus;
    den += w;
  }
  return den > 0 ? std::max(1u, static_cast<unsigned>(std::lround(num / den))) : 1u;
}

}  // namespace

Result<CheckpointSweep> checkpoint_sweep(const Trace& trace, const SimConfig& config,
                                         const std::string& policy,
                                         std::vector<double> intervals_s) {
  const FailureOptions& f = config.options.failure;
  if (Status ok = check_cluster_size(config.cluster); !ok) return ok.error();
  if (Status ok = validate_failure_options(f); !ok) return ok.error();
  const std::vector<FailureClass> classes = effective_classes(f);
  CheckpointSweep sweep;
  sweep.policy = policy;
  sweep.checkpoint_cost_s = static_cast<double>(f.checkpoint_cost_ms) / 1000.0;
  sweep.reference_gpus = reference_width(trace);
  // The reference job's interruption rate over every class (whole nodes held when multi-node).
  const double job_rate = job_rate_for_width(classes, sweep.reference_gpus,
                                             config.cluster.gpus_per_node, f.nodes_per_group);
  if (job_rate <= 0)
    return make_error("sim.sweep_needs_failures",
                      "the checkpoint sweep needs a failure rate above 0",
                      "--failure-rate-per-gpu-hour or --failure-model");
  sweep.mtbf_per_gpu_h = sweep.reference_gpus / job_rate;
  const double mtbf_s = 3600.0 / job_rate;
  sweep.young_daly_interval_s = young_daly_interval_ms(sweep.checkpoint_cost_s, mtbf_s);
  if (intervals_s.empty()) {
    const double yd = std::max(60.0, sweep.young_daly_interval_s);
    for (double k : {0.125, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0, 8.0})
      intervals_s.push_back(yd * k);
  }
  auto prepared = prepare_jobs(trace, config.cluster);
  if (!prepared) return prepared.error();
  const sched::Cluster cluster = build_cluster(config.cluster);
  SimOptions options = with_shares(config);
  options.failure.requeue = true;
  options.keep_job_outcomes = false;  // a sweep point is its totals
  for (double iv : intervals_s) {
    options.failure.checkpoint_interval_ms = std::max<int64_t>(1000, std::llround(iv * 1000.0));
    auto out = run_simulation(prepared->jobs, cluster, policy, options);
    if (!out) return out.error();
    sweep.points.push_back(
        SweepPoint{static_cast<double>(options.failure.checkpoint_interval_ms) / 1000.0,
                   out->result.goodput, out->result.makespan_s, out->result.interruptions});
    if (out->result.goodput > sweep.best_goodput) {
      sweep.best_goodput = out->result.goodput;
      sweep.best_interval_s = sweep.points.back().interval_s;
    }
  }
  return sweep;
}

std::string render_sweep(const CheckpointSweep& s, std::string_view format) {
  if (format == "json") {
    nlohmann::json j{{"policy", s.policy},
                     {"checkpoint_cost_s", s.checkpoint_cost_s},
                     {"mtbf_per_gpu_h", s.mtbf_per_gpu_h},
                     {"reference_gpus", s.reference_gpus},
                     {"young_daly_interval_s", s.young_daly_interval_s},
                     {"best_interval_s", s.best_interval_s},
                     {"best_goodput", s.best_goodput}};
    for (const SweepPoint& p : s.points)
      j["points"].push_back({{"interval_s", p.interval_s},
                             {"goodput", p.goodput},
                             {"makespan_s", p.makespan_s},
                             {"interruptions", p.interruptions}});
    return dump_json(j) + "\n";
  }
  if (format == "csv") {
    std::string out = "interval_s,goodput,makespan_s,interruptions\n";
    for (const SweepPoint& p : s.points)
      out += fmt::format("{:.0f},{:.6f},{:.0f},{}\n", p.interval_s, p.goodput, p.makespan_s,
                         p.interruptions);
    return out;
  }
  std::string out = fmt::format(
      "Checkpoint sweep ({}; checkpoint cost {:.0f} s; MTBF {:.3g} GPU-hours; reference job {} "
      "GPUs)\n"
      "{:>12}  {:>8}  {:>12}  {:>13}\n",
      s.policy, s.checkpoint_cost_s, s.mtbf_per_gpu_h, s.reference_gpus, "interval_min", "goodput",
      "makespan_h", "interruptions");
  for (const SweepPoint& p : s.points)
    out += fmt::format("{:>12.1f}  {:>8.4f}  {:>12.1f}  {:>13}{}\n", p.interval_s / 60.0, p.goodput,
                       p.makespan_s / 3600.0, p.interruptions,
                       p.interval_s == s.best_interval_s ? "  <- best" : "");
  out += fmt::format(
      "Best interval {:.1f} min (goodput {:.4f}); Young/Daly sqrt(2 x C x MTBF) = {:.1f} min\n",
      s.best_interval_s / 60.0, s.best_goodput, s.young_daly_interval_s / 60.0);
  return out;
}

}  // namespace gw::sim
