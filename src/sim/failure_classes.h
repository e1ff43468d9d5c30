// Failure classes: causes of job interruptions, each with its own rate and scope (one GPU, one
// node, a group of nodes behind one switch, or one job), and the Llama 3 calibration of them
// (Table 5 of "The Llama 3 Herd of Models", copied into data/failure/llama3-table5.tsv).
// Pure arithmetic; the engine (engine.cpp) draws the events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw::sim {

// What one event of a class takes down, and so what its rate is counted per.
enum class FailureScope : uint8_t {
  kGpu,        // one GPU; rate per GPU-hour
  kNode,       // every GPU of one node; rate per node-hour
  kNodeGroup,  // every node behind one switch; rate per group-hour
  kJob,        // one running job, no hardware lost (software); rate per job-hour
  // One running job, no hardware lost, at a rate per GPU-hour of that job: a crash of any one
  // of its ranks (one process per GPU) stops a synchronous job, so independent per-rank hazards
  // add up with the job's width.
  kJobGpu,
};
std::string_view scope_name(FailureScope s);  // "gpu", "node", "node-group", "job", "job-gpu"
std::string_view rate_unit(FailureScope s);   // "GPU-hour", "node-hour", ...

struct FailureClass {
  std::string name;  // "gpu", "gpu-memory", "host", "network", "software", ...
  FailureScope scope = FailureScope::kGpu;
  double rate_per_unit_hour = 0;
  bool hardware = false;        // counts toward Llama 3's "about 78 %" hardware share
  bool infrastructure = false;  // counts toward an infrastructure MTTF (what Kokolis counts)
  uint32_t source_count = 0;    // interruptions of the calibration source it was fit on
};

// Scheduled stops: every `every_ms` from the first submit, every running job checkpoints and
// stops (no work lost), and the whole cluster is down for `down_ms`.
struct PlannedMaintenance {
  int64_t every_ms = 0;  // 0 = none
  int64_t down_ms = 0;
};

// The calibration run: Llama 3 405B pre-training, 54 days on 16,384 H100 GPUs in 2,048 servers.
inline constexpr unsigned kLlama3Gpus = 16384;
inline constexpr unsigned kLlama3GpusPerNode = 8;
inline constexpr double kLlama3Hours = 54.0 * 24.0;
inline constexpr uint32_t kLlama3Unexpected = 419, kLlama3Planned = 47;
// Two Grand Teton servers share a rack and its top-of-rack switch, so a switch or cable fault
// takes two nodes (Llama 3 §3.3.1, as summarised in Glenn Lockwood's notes on Meta's clusters).
inline constexpr unsigned kLlama3NodesPerSwitch = 2;

// The seven classes fitted to Table 5's counts so that the calibration run expects exactly those
// counts: count / (units x 1,296 h), units = GPUs (hardware and per-rank software), nodes or
// switches (2,048 / nodes_per_group).
std::vector<FailureClass> llama3_classes(unsigned nodes_per_group = kLlama3NodesPerSwitch);
// Llama 3's 47 planned interruptions as evenly spaced stops (one every 27.6 h), no downtime.
PlannedMaintenance llama3_planned();
// The calibration source, one sentence, for the report.
std::string llama3_source();

// The two single-rate options as classes ("gpu" per GPU-hour, "node" per node-hour), so the
// old options keep their meaning.
std::vector<FailureClass> single_rate_classes(double per_gpu_hour, double per_node_hour);

// Interruptions per hour of one running job of `gpus` GPUs on `nodes` whole nodes touching
// `groups` switch groups, summed over the classes `keep` accepts (all when null). Per-rank
// (kJobGpu) classes count `gpus` ranks.
double job_rate_per_hour(const std::vector<FailureClass>& classes, unsigned gpus, unsigned nodes,
                         unsigned groups, bool (*keep)(const FailureClass&) = nullptr);
// The same for a job of `gpus` GPUs placed on aligned whole nodes of `gpus_per_node`.
double job_rate_for_width(const std::vector<FailureClass>& classes, unsigned gpus,
                          unsigned gpus_per_node, unsigned nodes_per_group,
                          bool (*keep)(const FailureClass&) = nullptr);

// Effective training time (useful time / elapsed time) of a job that never ends, interrupted at
// rate `lambda_per_ms` (failures may strike during restarts too), restarting after `restart_ms`,
// with `interval_ms` of work between checkpoints costing `cost_ms` each. Exact for that renewal
// process: lambda I exp(-lambda R) / (exp(lambda (I + C)) - 1). Interval 0 (no checkpoint): 0.
double expected_ett(double lambda_per_ms, double interval_ms, double cost_ms, double restart_ms);
// Kokolis et al.'s first-order form (1 - lambda (R + I/2)) / (1 + C/I), for comparison.
double first_order_ett(double lambda_per_ms, double interval_ms, double cost_ms, double restart_ms);
// log of the expected wall time to finish `work_ms` from scratch with no checkpoints
// (restart first after each failure): what makes an unreachable job refusable up front.
double log_wall_without_checkpoints(double lambda_per_ms, double work_ms, double restart_ms);

}  // namespace gw::sim
