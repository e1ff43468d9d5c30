// Pure parsers for each supported trace format: text in, JobSpecs out. They never open files;
// read_trace (trace.cpp) reads the files and runs the shared post-processing (sorting, 0-based
// submit times, ids, synthesised users/limits, drops) over what these return.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/job.h"
#include "sim/trace.h"

namespace gw::sim::formats {

// What a parser appends. submit_ms is on the trace's own clock (not yet 0-based); user is
// empty (no supported trace has users); actual_runtime_ms is unset when the trace has no
// durations (Gavel, Pollux/Sia workloads).
struct ParsedJobs {
  std::vector<sched::JobSpec> jobs;
  std::vector<std::string> notes;
  size_t duplicate_ids = 0;  // rows whose source id was seen before (kept, renumbered)
};

// philly-sia/philly.csv: timestamp,duration,num_gpus,gpu_time,cluster.
Status parse_philly_sia(std::string_view text, std::string_view file, ParsedJobs& out);

// ITP raw (job_id,submission_time,duration,num_gpu) or elasticflow-derived (same columns plus
// synthetic ones, found by header name). `account` is the cluster id (file stem).
Status parse_itp(std::string_view text, std::string_view file, std::string_view account,
                 ParsedJobs& out);

// Gavel old format: 7 tab-separated fields, no header; `account` = the VC (file stem).
Status parse_gavel(std::string_view text, std::string_view file, std::string_view account,
                   ParsedJobs& out);

// Alibaba openb_pod_list_*.csv. Fractional GPU shares map to one whole GPU (see docs/traces.md).
Status parse_alibaba_pods(std::string_view text, std::string_view file, ParsedJobs& out);

// Tiresias job_id,num_gpu,submit_time,iterations,model_name,duration,interval.
Status parse_tiresias(std::string_view text, std::string_view file, ParsedJobs& out);

// Pollux/Sia workload: name,time,application,num_replicas,batch_size (no durations).
Status parse_pollux(std::string_view text, std::string_view file, ParsedJobs& out);

// Cluster descriptions shipped beside traces.
Result<ClusterSpec> parse_tiresias_cluster(std::string_view text, std::string_view file);
Result<ClusterSpec> parse_alibaba_nodes(std::string_view text, std::string_view file);
Result<ClusterSpec> parse_gavel_cluster_specs(std::string_view text, std::string_view file);

}  // namespace gw::sim::formats

namespace gw::sim {

// Everything read_trace does after reading the files, as pure functions over text: detects the
// format from the header (single-file formats), parses, and post-processes. `file` names the
// text in errors and notes; `stem` is the file name without extension (ITP cluster / Gavel VC).
Result<Trace> parse_trace_text(std::string_view text, std::string_view file, std::string_view stem,
                               const TraceOptions& options);

// Shared post-processing (see docs/traces.md): drops jobs without GPUs or with a run time <= 0,
// stable-sorts by submit, notes (keeps) jobs wider than the cluster, applies options.limit, makes
// submit times 0-based, numbers ids 1..N, synthesises users and time limits, adds notes.
Trace finalize_trace(std::string name, std::string path, formats::ParsedJobs parsed,
                     std::optional<ClusterSpec> cluster, const TraceOptions& options);

// A cluster for traces whose README gives none: the average GPU demand (GPU-seconds over the
// trace's span), at least the widest job, rounded up to 8-GPU nodes. nullopt without durations.
std::optional<ClusterSpec> cluster_from_demand(const std::vector<sched::JobSpec>& jobs);

// Philly VC sizes from the README (Helios philly_vc.csv), 8 GPUs per node assumed.
ClusterSpec philly_cluster(const std::vector<sched::JobSpec>& jobs,
                           std::vector<std::string>& notes);

}  // namespace gw::sim
