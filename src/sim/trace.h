// Trace readers: public GPU-cluster job traces -> JobSpecs, with each trace's caveats handled
// (unsorted rows, missing users, no time limits) and reported as notes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sched/job.h"

namespace gw::sim {

struct ClusterSpec {
  unsigned nodes = 1;
  unsigned gpus_per_node = 8;
  std::string gpu_model;  // "V100", "K80", ...
  // Tenants (accounts / virtual clusters) and their shares; empty = equal shares.
  std::vector<std::pair<std::string, double>> shares;
  unsigned total_gpus() const { return nodes * gpus_per_node; }
};

struct TraceOptions {
  uint64_t seed = 1;            // for synthesised users/limits and resampling
  std::optional<size_t> limit;  // read at most this many jobs
  // Synthesised time limit when a trace has none: actual runtime x a seeded factor in
  // [limit_factor_min, limit_factor_max] (users over-estimate; see docs/simulate.md).
  double limit_factor_min = 1.0;
  double limit_factor_max = 3.0;
  // Synthesised users when a trace has none: each job gets one of this many users of its
  // account, "<account>/u<k>", k drawn from the seed (see docs/traces.md).
  unsigned synthetic_users_per_account = 8;
};

struct Trace {
  std::string name;  // "philly-sia", ...
  std::string path;
  std::vector<sched::JobSpec> jobs;              // sorted by submit time, ids unique
  std::optional<ClusterSpec> suggested_cluster;  // what the trace's README describes
  std::vector<std::string> notes;                // caveats handled, for the report
};

// Reads a trace file or folder; the format is detected from the path and header. Any file may
// be gzip-compressed ("philly.csv.gz", "ee9e8c.trace.gz"): it is inflated while reading.
Result<Trace> read_trace(const std::string& path, const TraceOptions& options);

// The Philly trace bundled in the binary (what `simulate` replays without --trace).
Result<Trace> read_bundled_trace(const TraceOptions& options);

// Resamples a trace to `n` jobs (bootstrap of jobs with rescaled arrival times) so cost can
// be measured from 10k to 1M jobs.
Trace resample_trace(const Trace& trace, size_t n, uint64_t seed);

}  // namespace gw::sim
