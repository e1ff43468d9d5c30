#include "slurm/drain.h"

namespace gw::slurm {
namespace {

bool ours(const NodeStatus& n) {
  return n.reason.rfind(std::string(kReasonPrefix), 0) == 0;
}

}  // namespace

NodeAction decide(const std::string& sick_reason, const NodeStatus& node) {
  if (!node.drained()) return sick_reason.empty() ? NodeAction::kNone : NodeAction::kDrain;
  if (!ours(node)) return NodeAction::kLeaveOther;
  if (sick_reason.empty()) return NodeAction::kResume;
  return node.reason == sick_reason ? NodeAction::kNone : NodeAction::kDrain;
}

Result<DrainOutcome> apply_drain(const Scontrol& sc, const std::string& node,
                                 const std::string& sick_reason) {
  auto st = sc.show_node(node);
  if (!st) return st.error();
  DrainOutcome o;
  o.action = decide(sick_reason, *st);
  switch (o.action) {
    case NodeAction::kDrain:
      if (Status s = sc.drain(node, sick_reason); !s) return s.error();
      o.message = "drained " + node + ": " + sick_reason;
      break;
    case NodeAction::kResume:
      if (Status s = sc.resume(node); !s) return s.error();
      o.message = "resumed " + node + " (was: " + st->reason + ")";
      break;
    case NodeAction::kLeaveOther:
      o.message = node + " is drained for another reason (\"" + st->reason + "\"): left alone";
      break;
    case NodeAction::kNone:
      o.message = node + ": nothing to change (" + st->state + ")";
      break;
  }
  return o;
}

}  // namespace gw::slurm
