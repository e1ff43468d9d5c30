// gpuwarden simulate: replay a cluster trace through the scheduling policies side by side.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/options.h"
#include "cli/output_check.h"
#include "cli/progress.h"
#include "cli/sim_failure_options.h"
#include "core/input_file.h"
#include "core/text_safety.h"
#include "sched/policy.h"
#include "sim/render.h"
#include "sim/simulate.h"
#include "sim/trace.h"

namespace gw::cli {
namespace {

struct SimulateArgs {
  std::string trace;
  std::string policies = "fcfs,fcfs+backfill,priority+backfill,fairshare+backfill,sjf,las";
  unsigned nodes = 0, gpus_per_node = 0;
  uint64_t seed = 1;
  size_t limit = 0;
  FailureArgs failure;  // sim_failure_options.h
  double horizon_days = 0;
  bool sweep = false, spread = false;
  std::string format;  // "" = from the -o extension, else table
  std::string output;
  CommonFlags common;
  std::string placement = "pack";
  std::string jobs_out;
  std::vector<double> limit_factor;  // F or MIN,MAX: synthesised limit = run time x factor
  std::vector<double> dlas_thresholds;
  unsigned dlas_queues = 3;
  bool dlas_quantum = false;
  bool dlas_lists = false;
};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void add_options(CLI::App& sub, SimulateArgs& a) {
  sub.add_option("--trace", a.trace,
                 "Trace file or folder, plain or .gz (default: the bundled Philly trace)");
  sub.add_option("--policies", a.policies, "Comma-separated policies to compare")
      ->capture_default_str();
  // Cluster sizes: bounded so nodes x GPUs stays far inside 64-bit counts and memory.
  add_unsigned_option(sub, "--nodes", a.nodes, {1, 1e6, false, "nodes"},
                      "Nodes in the simulated cluster (default: the trace's)");
  add_unsigned_option(sub, "--gpus-per-node", a.gpus_per_node, {1, 1024, false, "GPUs"},
                      "GPUs per node (default: the trace's)");
  add_u64_option(sub, "--seed", a.seed, {0, 18446744073709551615.0, false, ""},
                 "Seed for synthesised fields and failures");
  add_u64_option(sub, "--limit", a.limit, {1, 1e9, false, "jobs"}, "Replay at most this many jobs");
  add_failure_options(sub, a.failure);
  add_real_option(sub, "--horizon-days", a.horizon_days, {0, 3650, false, "days"},
                  "Stop the simulation after this many days");
  sub.add_flag("--spread", a.spread, "Same as --placement spread");
  sub.add_option("--placement", a.placement,
                 "first-fit, pack, spread, pool or gang:N (docs/scheduling.md#placement)")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            return sched::parse_placement(v)
                       ? std::string()
                       : "--placement " + v +
                             ": expected first-fit, pack, spread, pool or gang:N (N 1-1024)";
          },
          "PLACEMENT"))
      ->capture_default_str();
  sub.add_option("--jobs-out", a.jobs_out, "Write every job's outcome per policy to this CSV");
  // A limit below the run time would kill the job: factors start at 1.
  add_real_list_option(sub, "--limit-factor", a.limit_factor, {1, 1000, false, ""}, {1, 2, true},
                       "Synthesised time limit = run time x factor: F, or MIN,MAX for a seeded "
                       "uniform factor (default 1,3); what sjf ranks by");
  add_real_list_option(sub, "--dlas-thresholds", a.dlas_thresholds, {0, 1e9, true, "seconds"},
                       {1, 63, true},
                       "dlas/dlas-gpu queue limits in seconds (GPU-seconds for dlas-gpu), e.g. "
                       "3250,7200");
  add_unsigned_option(sub, "--dlas-queues", a.dlas_queues, {1, 64, false, "queues"},
                      "dlas/dlas-gpu queue count");
  sub.add_flag("--dlas-quantum", a.dlas_quantum,
               "dlas/dlas-gpu: check preemption every LAS quantum instead of on every event");
  sub.add_flag("--dlas-tiresias-lists", a.dlas_lists,
               "dlas/dlas-gpu: the Tiresias simulator's queue lists and demotion timing (equal "
               "to it job by job) instead of submit order inside a queue")
      ->excludes("--dlas-quantum");
  sub.add_flag("--checkpoint-sweep", a.sweep,
               "Goodput for a range of checkpoint intervals (first policy), vs Young/Daly");
  sub.add_option("--format", a.format,
                 "table, json, csv or html (default: from the -o extension, else table)")
      ->check(CLI::IsMember({"table", "json", "csv", "html"}));
  sub.add_option("-o,--output", a.output, "Write the report to this file instead of stdout");
  add_common_flags(sub, a.common);
}

// -o report.html without --format writes HTML; a --format that contradicts the extension is
// refused rather than writing JSON into a file named .html.
std::string resolve_format(SimulateArgs& a) {
  const std::string implied = format_from_extension(a.output);
  if (a.format.empty()) {
    a.format = implied.empty() ? "table" : implied;
    return {};
  }
  if (!implied.empty() && implied != a.format && !(implied == "table" && a.format == "table"))
    return "--format " + a.format + " does not match the extension of -o " + a.output +
           " (which means " + implied + "); drop --format or rename the file";
  return {};
}

sim::SimConfig make_config(const SimulateArgs& a, const sim::ClusterSpec& cluster,
                           sim::FailureOptions failure) {
  sim::SimConfig c;
  c.cluster = cluster;
  c.policies = split_commas(a.policies);
  c.options.seed = a.seed;
  const auto placement = sched::parse_placement(a.placement).value_or(sched::Placement{});
  c.options.scheduler.packing = a.spread ? sched::Packing::kSpread : placement.packing;
  c.options.scheduler.instance_gpus = a.spread ? 0 : placement.instance_gpus;
  c.options.policy.dlas_queues = a.dlas_queues;
  c.options.policy.dlas_event_driven = !a.dlas_quantum;
  c.options.policy.dlas_tiresias_lists = a.dlas_lists;
  c.options.failure = std::move(failure);
  if (a.horizon_days > 0) c.options.horizon_ms = static_cast<int64_t>(a.horizon_days * 86400000);
  if (!a.dlas_thresholds.empty()) c.options.policy.dlas_thresholds_s = a.dlas_thresholds;
  // Only the JSON report and --jobs-out list jobs; the rest need the figures alone.
  c.options.keep_job_outcomes = a.format == "json" || !a.jobs_out.empty();
  return c;
}

sim::TraceOptions trace_options(const SimulateArgs& a) {
  sim::TraceOptions t;
  t.seed = a.seed;
  if (a.limit > 0) t.limit = a.limit;
  if (!a.limit_factor.empty()) {
    t.limit_factor_min = a.limit_factor.front();
    t.limit_factor_max = a.limit_factor.back();
  }
  return t;
}

// The trace reader opens paths itself: refuse devices and FIFOs before it blocks on one.
bool trace_path_ok(const SimulateArgs& a, const Io& io) {
  if (a.trace.empty()) return true;
  // A missing PATH is read as PATH.gz (docs/traces.md): check what will be read.
  std::string checked = a.trace;
  if (input_kind(checked) == InputKind::kMissing &&
      input_kind(checked + ".gz") != InputKind::kMissing)
    checked += ".gz";
  if (Status st = check_input_path(checked, true); !st) {
    io.err << "gpuwarden simulate: --trace: " << terminal_safe(st.error().to_string()) << " ["
           << st.error().code << "]\n";
    return false;
  }
  return true;
}

std::string render(const sim::SimReport& r, const std::string& format, bool color) {
  if (format == "json") return sim::render_json(r);
  if (format == "csv") return sim::render_csv(r);
  if (format == "html") return sim::render_html(r);
  return sim::render_table(r, color);
}

int emit(const std::string& text, const SimulateArgs& a, const Io& io) {
  if (a.output.empty()) {
    io.out << text;
    return 0;
  }
  // Through a temporary file: a full disk never leaves a truncated report in place.
  if (Status st = write_file_atomically(a.output, text, true); !st) {
    io.err << "gpuwarden simulate: " << st.error().to_string() << "\n";
    return kWriteError;
  }
  return 0;
}

int simulate(const SimulateArgs& a, const Io& io) {
  auto failure = make_failure_options(a.failure);
  if (failure) {
    if (Status h = check_range("--horizon-days", a.horizon_days, 0, 3650, "days"); !h)
      failure = h.error();
  }
  if (!failure) {
    io.err << "gpuwarden simulate: " << failure.error().to_string() << "\n";
    // Every error here is about the options alone (a value out of range, a checkpoint that
    // costs more than its interval): a usage error, with the one code every subcommand uses.
    return kUsageError;
  }
  const sim::TraceOptions topt = trace_options(a);
  if (!trace_path_ok(a, io)) return 2;
  Progress progress(io.err, progress_wanted(a.common.quiet));
  progress.update(
      "simulate: reading " + (a.trace.empty() ? std::string("the bundled trace") : a.trace), true);
  auto trace = a.trace.empty() ? sim::read_bundled_trace(topt) : sim::read_trace(a.trace, topt);
  progress.clear();
  if (!trace) {
    io.err << "gpuwarden simulate: " << trace.error().to_string() << "\n";
    return 2;
  }
  sim::ClusterSpec cluster = trace->suggested_cluster.value_or(sim::ClusterSpec{});
  if (a.nodes > 0) cluster.nodes = a.nodes;
  if (a.gpus_per_node > 0) cluster.gpus_per_node = a.gpus_per_node;
  if (!trace->suggested_cluster && (a.nodes == 0 || a.gpus_per_node == 0)) {
    io.err << "gpuwarden simulate: " << a.trace
           << ": the trace suggests no cluster size; give --nodes and --gpus-per-node\n";
    return 2;
  }
  const sim::SimConfig config = make_config(a, cluster, std::move(*failure));
  for (const std::string& p : config.policies) {
    if (auto ok = sched::make_policy(p); !ok) {
      io.err << "gpuwarden simulate: " << ok.error().to_string() << "\n";
      return 2;
    }
  }
  if (a.sweep) {
    auto sweep = sim::checkpoint_sweep(*trace, config, config.policies.at(0));
    if (!sweep) {
      io.err << "gpuwarden simulate: " << sweep.error().to_string() << "\n";
      return 2;
    }
    return emit(sim::render_sweep(*sweep, a.format == "html" ? "table" : a.format), a, io);
  }
  progress.update("simulate: replaying " + std::to_string(trace->jobs.size()) + " jobs through " +
                      std::to_string(config.policies.size()) + " policies",
                  true);
  auto report = sim::simulate_policies(*trace, config);
  progress.clear();
  if (!report) {
    io.err << "gpuwarden simulate: " << report.error().to_string() << "\n";
    return 2;
  }
  if (a.format == "table") {  // the trace's path and notes must not drive the terminal
    report->trace = terminal_safe(report->trace);
    for (std::string& n : report->notes) n = terminal_safe(n);
  }
  if (!a.jobs_out.empty()) {
    if (Status st = write_file_atomically(a.jobs_out, sim::render_jobs_csv(*report), true); !st) {
      io.err << "gpuwarden simulate: " << st.error().to_string() << "\n";
      return kWriteError;
    }
  }
  return emit(render(*report, a.format, io.color && !a.common.no_color && a.output.empty()), a, io);
}

}  // namespace

Action configure_simulate(CLI::App& sub, const Io& io) {
  auto args = std::make_shared<SimulateArgs>();
  add_options(sub, *args);
  return [args, &io] {
    if (args->policies.empty() || split_commas(args->policies).empty()) {
      io.err << "gpuwarden simulate: --policies is empty\n";
      return kUsageError;
    }
    if (auto problem = resolve_format(*args); !problem.empty()) {
      io.err << "gpuwarden simulate: " << problem << "\n";
      return kUsageError;
    }
    return simulate(*args, io);
  };
}

}  // namespace gw::cli
