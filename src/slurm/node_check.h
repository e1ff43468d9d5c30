// The health verdict of this node: the findings of the running daemon (its JSON API on
// loopback, one short deadline) or, when no daemon answers, of one quick snapshot through the
// same NVML loader and rules as doctor. A hung GPU costs one NVML call deadline, never more.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/finding.h"
#include "core/result.h"
#include "slurm/check_config.h"
#include "sources/gpu_source.h"

namespace gw::slurm {

struct Verdict {
  std::vector<Finding> sick;          // the findings that make the node sick, worst first
  std::string from;                   // "daemon http://127.0.0.1:9400" or "snapshot (...)"
  std::vector<std::string> notes;     // why the daemon was not used, ...
  std::vector<std::string> warnings;  // said on stderr even without --verbose (a test not run)
  bool healthy() const { return sick.empty(); }
};

struct CheckRequest {
  GpuSourceOptions source;
  std::optional<std::set<unsigned>> gpus;  // only these GPUs (a job's); host findings always
  // --active: load the GPUs this many seconds through the CUDA driver (active::run_stress) and
  // judge what the load showed; never read from the daemon, which does not load GPUs.
  std::optional<double> active_s;
  std::optional<std::string> cuda_library;
};

// Active findings from the daemon at `url` (GET /api/findings). Errors: "daemon.unreachable",
// "daemon.bad_reply".
Result<std::vector<Finding>> daemon_findings(const std::string& url,
                                             std::chrono::milliseconds timeout);
// Findings of one snapshot of the GPU source (a whole-source failure becomes a finding:
// a GPU node whose driver cannot be read is not healthy).
std::vector<Finding> snapshot_findings(const GpuSourceOptions& source, std::string* from);

// Findings of a controlled load (check --active): the sample before it, the load and the copies,
// judged by the same rules as `doctor --stress`. A GPU running other processes is never loaded.
std::vector<Finding> active_findings(const CheckRequest& request, std::string* from);

Verdict check_node(const CheckConfig& config, const CheckRequest& request);

// "gpuwarden: GPU 5 gpu.fallen_off_bus: Reseat or replace the GPU" (the drain reason and the
// one line `check` prints); at most ~120 characters, printable ASCII only.
std::string reason_line(const Verdict& v);

inline constexpr std::string_view kReasonPrefix = "gpuwarden:";

}  // namespace gw::slurm
