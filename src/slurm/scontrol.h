// Slurm through its own client: `scontrol show node`, `update NodeName=.. State=DRAIN|RESUME`,
// `update JobId=.. AdminComment=..`. Every call runs under the configured deadline, so a
// controller that does not answer is an error, never a hang.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gw::slurm {

struct NodeStatus {
  std::string state;     // "IDLE+DRAIN", "MIXED", "DOWN*+DRAIN"
  std::string reason;    // without the " [user@time]" Slurm appends; "" when none
  bool drained() const;  // DRAIN in the state flags (draining or drained)
};

// Parses `scontrol show node NAME` text (one-line or multi-line). Pure.
Result<NodeStatus> parse_show_node(std::string_view text);

class Scontrol {
 public:
  Scontrol(std::string path, std::chrono::milliseconds timeout)
      : path_(std::move(path)), timeout_(timeout) {}
  Result<NodeStatus> show_node(const std::string& node) const;
  Status drain(const std::string& node, const std::string& reason) const;
  Status resume(const std::string& node) const;
  // A running job through slurmctld; a finished one (the epilog's case: Slurm refuses
  // "Job has already finished") through the accounting database with `sacctmgr`, the one
  // way to change a finished job's AdminComment (needs slurmdbd), which is what sacct shows.
  Status set_admin_comment(const std::string& job_id, const std::string& comment) const;

 private:
  Status update(const std::vector<std::string>& args, const std::string& what) const;
  std::string path_;
  std::chrono::milliseconds timeout_;
};

}  // namespace gw::slurm
