// Slurm's word on a GPU node (sources/app/slurm_node.h): a node drained because it reported
// fewer GPUs than its configuration names. The cause is on the node: a GPU lost or not probed
// by the driver, or a change of what NVML reports (MIG mode on, instances instead of GPUs).
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {

void rule_slurm_gpu_count_low(const DiagnoseContext& c, Findings& out) {
  std::map<std::string, std::vector<const AppMessage*>> by_node;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kSlurmGpuCountLow))
    by_node[m->detail].push_back(m);
  for (const auto& [node, ms] : by_node) {
    const AppMessage& m = *ms.front();
    std::vector<std::string> ev;
    for (const AppMessage* x : ms) {
      if (ev.size() == 3) break;
      ev.push_back(fmt::format("\"{}\" ({})", x->text.substr(0, 200), x->origin));
    }
    if (!c.gpus.empty())
      ev.push_back(fmt::format("{} GPU(s) in the capture's nvidia-smi/NVML view", c.gpus.size()));
    const std::string where = node.empty() ? std::string("a node") : "node " + node;
    Finding f = make_finding(
        "slurm.gpu_count_low", Severity::kCritical, nullptr,
        fmt::format("Slurm took {} out of service: it reported {} GPU(s) where {} are configured",
                    where, m.gpus_usable.value_or(0), m.gpus_total.value_or(0)),
        std::move(ev));
    out.push_back(std::move(f));
  }
}

void rule_slurm_gres_device_missing(const DiagnoseContext& c, Findings& out) {
  std::map<std::string, std::vector<const AppMessage*>> by_path;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kSlurmGresDeviceMissing))
    by_path[m->detail].push_back(m);
  for (const auto& [path, ms] : by_path) {
    std::vector<std::string> ev;
    for (const AppMessage* x : ms) {
      if (ev.size() == 3) break;
      ev.push_back(fmt::format("\"{}\" ({})", x->text.substr(0, 200), x->origin));
    }
    const bool fatal = std::any_of(ms.begin(), ms.end(), [](const AppMessage* x) {
      return x->text.find("fatal") != std::string::npos;
    });
    out.push_back(make_finding(
        "slurm.gres_device_missing", Severity::kCritical, nullptr,
        fmt::format("slurmd cannot find {}, a GPU device file its gres.conf names{}", path,
                    fatal ? ": slurmd stopped, the node is out of the cluster" : ""),
        std::move(ev)));
  }
}

}  // namespace gw
