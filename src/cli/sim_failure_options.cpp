#include "cli/sim_failure_options.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>

#include "cli/options.h"
#include "sim/failure_classes.h"

namespace gw::cli {
namespace {

constexpr double kTenYearsMin = 10 * 365 * 24 * 60.0;

int64_t ms(double v, double unit_ms) {
  return static_cast<int64_t>(std::llround(v * unit_ms));
}

}  // namespace

Status check_range(const char* name, double value, double lo, double hi, const char* unit) {
  if (std::isfinite(value) && value >= lo && value <= hi) return {};
  return make_error(
      "cli.bad_option",
      fmt::format("must be a finite number from {} to {} {} (got {})", lo, hi, unit, value), name);
}

void add_failure_options(CLI::App& sub, FailureArgs& a) {
  sub.add_option("--failure-model", a.model,
                 "Failures by cause: none, or llama3 (Llama 3 Table 5 classes and planned "
                 "maintenance; see docs/simulate.md)")
      ->check(CLI::IsMember({"none", "llama3"}))
      ->capture_default_str();
  // The same ranges make_failure_options() checks, refused at parse time with the one usage
  // code and message shape (options.h).
  add_real_option(sub, "--failure-rate-per-gpu-hour", a.failure_rate,
                  {0, 100, false, "per GPU-hour"},
                  "GPU failures per GPU-hour, one class (e.g. 2.19e-5)");
  add_real_option(sub, "--node-failure-rate-per-node-hour", a.node_failure_rate,
                  {0, 100, false, "per node-hour"}, "Whole-node failures per node-hour, one class");
  add_real_option(sub, "--repair-minutes", a.repair_minutes, {0, kTenYearsMin, false, "minutes"},
                  "Time to repair a failed GPU or node");
  add_real_option(sub, "--checkpoint-minutes", a.checkpoint_minutes,
                  {0, kTenYearsMin, false, "minutes"}, "Checkpoint interval (0: none)");
  add_real_option(sub, "--checkpoint-cost-seconds", a.checkpoint_cost_s,
                  {0, kTenYearsMin * 60, false, "seconds"}, "Wall time one checkpoint takes");
  add_real_option(sub, "--restart-seconds", a.restart_s, {0, kTenYearsMin * 60, false, "seconds"},
                  "Wall time to reload a checkpoint");
  add_real_option(sub, "--maintenance-every-hours", a.maintenance_hours,
                  {0, kTenYearsMin / 60, false, "hours"},
                  "Planned maintenance period (0: none; default: the failure model's)");
  add_real_option(sub, "--maintenance-minutes", a.maintenance_minutes,
                  {0, kTenYearsMin, false, "minutes"},
                  "Cluster downtime of each planned maintenance");
  add_unsigned_option(sub, "--network-nodes-per-event", a.network_nodes,
                      {1, 100000, false, "nodes"}, "Nodes one network (switch) failure takes");
  sub.add_flag("--requeue", a.requeue, "Requeue jobs whose GPU failed (else they fail)");
}

Result<sim::FailureOptions> make_failure_options(const FailureArgs& a) {
  struct Bound {
    const char* name;
    double value, lo, hi;
    const char* unit;
  };
  for (const Bound& b : {
           Bound{"--failure-rate-per-gpu-hour", a.failure_rate, 0, 100, "per GPU-hour"},
           Bound{"--node-failure-rate-per-node-hour", a.node_failure_rate, 0, 100, "per node-hour"},
           Bound{"--repair-minutes", a.repair_minutes, 0, kTenYearsMin, "minutes"},
           Bound{"--checkpoint-minutes", a.checkpoint_minutes, 0, kTenYearsMin, "minutes"},
           Bound{"--checkpoint-cost-seconds", a.checkpoint_cost_s, 0, kTenYearsMin * 60, "seconds"},
           Bound{"--restart-seconds", a.restart_s, 0, kTenYearsMin * 60, "seconds"},
           Bound{"--maintenance-minutes", a.maintenance_minutes, 0, kTenYearsMin, "minutes"},
           Bound{"--network-nodes-per-event", static_cast<double>(a.network_nodes), 1, 100000,
                 "nodes"},
       })
    if (Status s = check_range(b.name, b.value, b.lo, b.hi, b.unit); !s) return s.error();
  if (a.maintenance_hours)
    if (Status s = check_range("--maintenance-every-hours", *a.maintenance_hours, 0,
                               kTenYearsMin / 60, "hours");
        !s)
      return s.error();
  sim::FailureOptions f;
  const bool single = a.failure_rate > 0 || a.node_failure_rate > 0;
  if (a.model == "llama3") {
    if (single)
      return make_error("cli.bad_option",
                        "give either --failure-model or the single failure rates, not both",
                        "--failure-model");
    f.nodes_per_group = a.network_nodes;
    f.classes = sim::llama3_classes(f.nodes_per_group);
    f.planned = sim::llama3_planned();
    f.calibration = sim::llama3_source();
  } else {
    f.gpu_failures_per_gpu_hour = a.failure_rate;
    f.node_failures_per_node_hour = a.node_failure_rate;
    f.nodes_per_group = a.network_nodes;
  }
  if (a.maintenance_hours) f.planned.every_ms = ms(*a.maintenance_hours, 3.6e6);
  f.planned.down_ms = ms(a.maintenance_minutes, 60000);
  f.repair_ms = ms(a.repair_minutes, 60000);
  f.checkpoint_interval_ms = ms(a.checkpoint_minutes, 60000);
  f.checkpoint_cost_ms = ms(a.checkpoint_cost_s, 1000);
  f.restart_overhead_ms = ms(a.restart_s, 1000);
  f.requeue = a.requeue;
  // Combinations (cost above the interval, maintenance too frequent), named by option.
  if (Status s = sim::validate_failure_options(f); !s) {
    Error e = s.error();
    for (auto [what, option] : {std::pair{"checkpoint cost", "--checkpoint-cost-seconds"},
                                {"maintenance period", "--maintenance-every-hours"},
                                {"repair time", "--repair-minutes"},
                                {"checkpoint interval", "--checkpoint-minutes"},
                                {"restart time", "--restart-seconds"},
                                {"maintenance downtime", "--maintenance-minutes"}})
      if (e.where == what) e.where = option;
    return e;
  }
  return f;
}

}  // namespace gw::cli
