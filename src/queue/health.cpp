// Health-aware per GPU: critical findings drain that GPU (typed reason, by "gpuwarden"); the
// daemon resumes only what it drained itself once the finding clears; a running job on a GPU
// that fails is failed, or requeued when it asked for it.
#include <fmt/format.h>

#include <array>
#include <csignal>
#include <map>
#include <regex>

#include "queue/service.h"
#include "queue/supervisor.h"

namespace gw::queue {
namespace {

// Finding codes that take a GPU out of service.
// gpu.fabric_unhealthy drains only when critical (a route unhealthy, the configuration
// incorrect): degraded bandwidth slows a job without breaking it.
constexpr std::array<std::string_view, 11> kDrainCodes = {
    "gpu.fallen_off_bus",     "gpu.hung",
    "gpu.reset_required",     "ecc.dbe_volatile",
    "ecc.row_remap_pending",  "ecc.row_remap_failure",
    "ecc.retirement_pending", "driver.reset_required",
    "gpu.fabric_not_ready",   "gpu.fabric_error",
    "gpu.fabric_unhealthy"};
// Xids that mean the GPU itself needs attention (the finding names the Xid in its title).
constexpr std::array<unsigned, 6> kDrainXids = {48, 79, 94, 95, 119, 154};

bool drains_gpu(const Finding& f) {
  if (!f.gpu || f.severity != Severity::kCritical) return false;
  if (std::find(kDrainCodes.begin(), kDrainCodes.end(), f.code) != kDrainCodes.end()) return true;
  if (f.code.rfind("xid.", 0) != 0) return false;
  static const std::regex kXid(R"(Xid (\d+))");
  std::smatch m;
  for (auto it = std::sregex_iterator(f.title.begin(), f.title.end(), kXid);
       it != std::sregex_iterator(); ++it)
    if (std::find(kDrainXids.begin(), kDrainXids.end(), std::stoul((*it)[1])) != kDrainXids.end())
      return true;
  return false;
}

std::optional<std::pair<std::string, std::string>> access_problem(GpuAccess a) {
  switch (a) {
    case GpuAccess::kLost:
      return std::pair{std::string("gpu.lost"), std::string("GPU lost (fallen off the bus)")};
    case GpuAccess::kResetRequired:
      return std::pair{std::string("gpu.reset_required"), std::string("reset required")};
    case GpuAccess::kHung:
      return std::pair{std::string("gpu.hung"), std::string("NVML calls hang")};
    default:
      return std::nullopt;
  }
}

}  // namespace

void QueueService::fail_on_gpu(JobRecord& j, unsigned gpu, const std::string& why) {
  if (auto sup = read_supervisor(job_dir(j))) signal_supervisor(*sup);
  sched_dirty_ = true;
  const std::string reason = fmt::format("GPU {} failed: {}", gpu, why);
  if (!j.requeue) return finish(j, State::kFailed, reason);
  write_job_map(j, false);
  charge_run(j, clock_.now_ms());
  j.state = State::kPending;  // the next attempt gets its own directory and healthy GPUs
  j.reason = "requeued: " + reason;
  j.start_ms.reset();
  (void)db_->update(j);
}

void QueueService::apply_health(const Snapshot& snap, const std::vector<Finding>& findings) {
  std::map<unsigned, std::pair<std::string, std::string>> sick;  // gpu -> (code, reason)
  for (const GpuState& g : snap.gpus)
    if (auto p = access_problem(g.access)) sick[g.info.index] = *p;
  for (const Finding& f : findings)
    if (drains_gpu(f) && !sick.count(*f.gpu)) sick[*f.gpu] = {f.code, f.title};
  auto drains = db_->drains();
  if (!drains) return;
  for (const Drain& d : *drains)
    if (d.automatic && !sick.count(d.gpu)) (void)db_->clear_drain(d.gpu);  // it cleared
  for (const auto& [gpu, why] : sick) {
    const bool had =
        std::any_of(drains->begin(), drains->end(), [&](const Drain& d) { return d.gpu == gpu; });
    if (!had)
      (void)db_->set_drain({gpu, why.second, "gpuwarden", true, why.first, clock_.now_ms()});
  }
  for (JobRecord& j : running_jobs()) {
    for (unsigned g : j.gpu_indices)
      if (auto it = sick.find(g); it != sick.end()) {
        fail_on_gpu(j, g, it->second.second);
        break;
      }
  }
}

}  // namespace gw::queue
