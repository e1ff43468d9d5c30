// Whether to drain, resume or leave the node: gpuwarden resumes only a node it drained itself
// (its reason starts with "gpuwarden:"), never one an admin or another tool drained.
#pragma once

#include <string>

#include "slurm/node_check.h"
#include "slurm/scontrol.h"

namespace gw::slurm {

enum class NodeAction {
  kNone,        // healthy and not drained by us, or sick and drained by us with this reason
  kDrain,       // sick: drain (or replace our own older reason)
  kResume,      // healthy again and drained by us
  kLeaveOther,  // drained for another reason: not ours to touch
};

// Pure: what to do given the verdict's reason ("" when healthy) and the node's status.
NodeAction decide(const std::string& sick_reason, const NodeStatus& node);

struct DrainOutcome {
  NodeAction action = NodeAction::kNone;
  std::string message;  // one line for the log / stderr
};

// Reads the node, decides, acts. Errors (no scontrol, no answer) leave the node unchanged.
Result<DrainOutcome> apply_drain(const Scontrol& sc, const std::string& node,
                                 const std::string& sick_reason);

}  // namespace gw::slurm
