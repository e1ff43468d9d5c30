// What sim_bench replays, shared with the test that checks it against the CLI
// (tests/sim/cli_jobs_test.cpp): the jobs and configuration `gpuwarden simulate --trace PATH
// --limit N [--nodes X] [--gpus-per-node G] --placement P --policies ONE` replays, read and
// built by the same library calls with the CLI's defaults.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "core/result.h"
#include "sched/cluster.h"
#include "sim/simulate.h"
#include "sim/trace.h"

namespace gw::bench {

struct Workload {
  sim::Trace trace;
  sim::ClusterSpec cluster;
  bool resampled = false;  // more jobs were asked for than the trace holds
};

// The trace's first n jobs as the CLI reads them (plain or .gz, seed 1); beyond the trace's
// own count, the whole trace resampled to n jobs. nodes / gpus_per_node 0: the trace's.
inline Result<Workload> trace_workload(const std::string& path, size_t n, unsigned nodes,
                                       unsigned gpus_per_node) {
  sim::TraceOptions o;  // the CLI's defaults: seed 1, limit factors 1-3
  o.limit = n;
  auto t = sim::read_trace(path, o);
  if (!t) return t.error();
  Workload w;
  w.trace = std::move(*t);
  if (w.trace.jobs.size() < n) {
    auto all = sim::read_trace(path, sim::TraceOptions{});
    if (!all) return all.error();
    w.trace = sim::resample_trace(*all, n, 1);
    w.resampled = true;
  }
  w.cluster = w.trace.suggested_cluster.value_or(sim::ClusterSpec{});
  if (nodes > 0) w.cluster.nodes = nodes;
  if (gpus_per_node > 0) w.cluster.gpus_per_node = gpus_per_node;
  return w;
}

// The CLI's configuration for one policy and placement (seed 1, no failures).
inline sim::SimConfig replay_config(const Workload& w, const std::string& policy,
                                    sched::Packing packing) {
  sim::SimConfig c;
  c.cluster = w.cluster;
  c.policies = {policy};
  c.options.seed = 1;
  c.options.scheduler.packing = packing;
  return c;
}

}  // namespace gw::bench
