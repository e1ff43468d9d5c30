// Kubernetes rules about the GPU Operator and GPU scheduling (sources/app/k8s_operator.h): the
// operator's components whose pods are not ready (the device plugin only starts after the
// operator's validator has passed, so the node then advertises no GPU), and pods the scheduler
// could not place for want of free nvidia.com/gpu.
#include <fmt/format.h>

#include <set>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

bool mentions(const std::string& s, std::string_view what) {
  return s.find(what) != std::string::npos;
}

// What to look at next, from what the messages name: the validator's init containers, the
// container runtime that must run the NVIDIA hook.
std::string operator_remedy(const std::vector<const AppMessage*>& ms) {
  bool crio = false, containerd = false;
  for (const AppMessage* m : ms) {
    crio = crio || mentions(m->detail, "runtime cri-o");
    containerd = containerd || mentions(m->detail, "runtime containerd");
  }
  std::string r =
      "The operator starts the device plugin, feature discovery and dcgm-exporter only after "
      "nvidia-operator-validator has passed (its init containers driver-validation, "
      "toolkit-validation, cuda-validation, plugin-validation, in that order). Read the first "
      "one that did not finish: kubectl -n <operator namespace> logs <nvidia-operator-validator "
      "pod> -c driver-validation (then -c toolkit-validation). A failing toolkit-validation "
      "(\"nvidia-smi\": executable file not found) means the container runtime does not run "
      "GPU containers through the NVIDIA runtime.";
  if (crio)
    r += " This node runs CRI-O: CRI-O uses the NVIDIA hook only when its hooks_dir includes "
         "/run/containers/oci/hooks.d (crio.conf, [crio.runtime]); fix it, restart CRI-O, "
         "then delete the validator pod.";
  else if (containerd)
    r += " This node runs containerd: check that its config.toml has the nvidia runtime "
         "(nvidia-ctk runtime configure --runtime=containerd), restart containerd, then the "
         "toolkit and validator pods.";
  return r;
}

}  // namespace

void rule_container_gpu_operator_not_ready(const DiagnoseContext& c, Findings& out) {
  const auto ms = app_messages_of(c, AppMessageKind::kGpuComponentNotReady);
  if (ms.empty()) return;
  std::vector<std::string> ev, states;
  std::set<std::string> seen;
  for (const AppMessage* m : ms) {
    ev.push_back(fmt::format("{}: {}", m->origin, m->detail));
    if (seen.insert(m->detail).second && states.size() < 3) states.push_back(m->detail);
  }
  if (seen.size() > states.size())
    states.push_back(fmt::format("{} more", seen.size() - states.size()));
  ev.push_back(
      "until these are ready the node advertises no nvidia.com/gpu: no GPU pod is scheduled "
      "there");
  out.push_back(make_finding(
      "container.gpu_operator_not_ready", Severity::kWarning, nullptr,
      fmt::format("GPU Operator components are not ready ({})", fmt::join(states, "; ")),
      std::move(ev), operator_remedy(ms)));
}

void rule_container_gpu_unschedulable(const DiagnoseContext& c, Findings& out) {
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kGpuUnschedulable)) {
    std::vector<std::string> ev = {fmt::format("{}: {}", m->origin, m->text.substr(0, 200))};
    for (const AppMessage* n : app_messages_of(c, AppMessageKind::kNodeGpuResources))
      if (n->gpus_usable && *n->gpus_usable > 0)
        ev.push_back(fmt::format(
            "a node advertises {} allocatable GPU(s) ({}): the device plugin works there; "
            "its GPUs are taken by other pods, or the pod asks for more than one node has",
            *n->gpus_usable, n->origin));
    const std::string nodes =
        m->gpus_total && m->gpus_usable
            ? fmt::format("{} of {} node(s) without enough free nvidia.com/gpu", *m->gpus_usable,
                          *m->gpus_total)
            : std::string("Insufficient nvidia.com/gpu");
    out.push_back(make_finding(
        "container.gpu_unschedulable", Severity::kWarning, nullptr,
        fmt::format("The scheduler found no node with enough free GPUs for a pod ({})", nodes),
        std::move(ev),
        "Compare the pod's nvidia.com/gpu limit with each GPU node's Allocatable minus what its "
        "pods already hold (kubectl describe node: \"Allocated resources\"); completed pods that "
        "were not deleted hold none, but pods stuck Terminating do. A nodeSelector, affinity or "
        "taint may also keep the pod off the GPU nodes (the event counts each node under every "
        "reason that applies). A GPU node with Allocatable 0 is the device plugin's problem."));
  }
}

}  // namespace gw
