// NVSwitch fabric registration. On NVSwitch systems (HGX/DGX A100, H100, H200, B200, GB200) the
// fabric manager registers every GPU with the fabric; until a GPU's State reads Completed with
// Status Success, CUDA refuses it (error 802, "system not yet initialized"), whatever its
// temperatures and clocks say. GPUs without a fabric report Not Supported or N/A: no finding.
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

bool status_ok(const GpuSample& s) {
  return s.fabric_status.empty() || s.fabric_status == "Success";
}

// Evidence for one GPU: its last state, and whether it was ever Completed before (a fabric
// that dropped a registered GPU says more than one still registering at boot).
std::vector<std::string> fabric_evidence(const GpuSeries& g) {
  const GpuSample& s = *g.last();
  std::vector<std::string> ev{
      fmt::format("fabric State {}{}", fabric_state_name(*s.fabric_state),
                  s.fabric_status.empty() ? std::string() : ", Status " + s.fabric_status)};
  size_t completed = 0, same = 0;
  for (const GpuSample* earlier : g.samples) {
    if (earlier->fabric_state == FabricState::kCompleted) ++completed;
    if (earlier->fabric_state == s.fabric_state) ++same;
  }
  if (completed > 0 && s.fabric_state != FabricState::kCompleted)
    ev.push_back(fmt::format("it read Completed in {} earlier sample(s)", completed));
  else if (g.samples.size() > 1)
    ev.push_back(fmt::format("{} in {} of {} samples", fabric_state_name(*s.fabric_state), same,
                             g.samples.size()));
  return ev;
}

}  // namespace

void rule_gpu_fabric_not_ready(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const GpuSample* s = g.last();
    if (!s || !s->fabric_state) continue;
    if (*s->fabric_state != FabricState::kNotStarted &&
        *s->fabric_state != FabricState::kInProgress)
      continue;
    out.push_back(make_finding(
        "gpu.fabric_not_ready", Severity::kCritical, &g,
        fmt::format("{} is not registered with the NVSwitch fabric ({}): CUDA cannot use it",
                    gpu_label(g), fabric_state_name(*s->fabric_state)),
        fabric_evidence(g)));
  }
}

void rule_gpu_fabric_error(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const GpuSample* s = g.last();
    if (!s || s->fabric_state != FabricState::kCompleted || status_ok(*s)) continue;
    out.push_back(make_finding(
        "gpu.fabric_error", Severity::kCritical, &g,
        fmt::format("{}'s NVSwitch fabric registration failed: {}", gpu_label(g), s->fabric_status),
        fabric_evidence(g)));
  }
}

}  // namespace gw
