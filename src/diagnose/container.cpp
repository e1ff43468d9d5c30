// Container and orchestration rules (sources/app/k8s_gpu.h): GPUs the NVIDIA device plugin
// marked unhealthy (Kubernetes then withholds them until the plugin restarts), a plugin that
// found no GPU, pods the kubelet refused for want of GPUs, and the container toolkit's hook
// failing before any GPU container can start.
#include <fmt/format.h>

#include <map>

#include "diagnose/catalogs.h"
#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

std::string line_of(const AppMessage& m) {
  return fmt::format("{}: {}", m.origin, m.text.substr(0, 200));
}

const GpuSeries* gpu_by_uuid(const DiagnoseContext& c, const std::optional<std::string>& uuid) {
  if (!uuid) return nullptr;
  for (const GpuSeries& g : c.gpus)
    if (g.info && g.info->uuid == *uuid) return &g;
  return nullptr;
}

// A node whose Allocatable nvidia.com/gpu is below its Capacity: the kubelet withholds the
// devices the plugin reported unhealthy.
std::optional<std::pair<unsigned, unsigned>> withheld(const AppMessage& m) {
  if (!m.gpus_total || !m.gpus_usable || *m.gpus_usable >= *m.gpus_total) return std::nullopt;
  return std::make_pair(*m.gpus_total, *m.gpus_usable);
}

constexpr std::string_view kRestartPlugin =
    "The device plugin never marks a GPU healthy again by itself: once the GPU is checked (its "
    "Xid's action; nvidia-smi -q, dcgmi diag -r 3) and reset or replaced, restart the plugin's "
    "pod (kubectl -n <namespace> delete pod <nvidia-device-plugin pod on this node>) so the "
    "node advertises it again.";

Finding unhealthy_finding(const DiagnoseContext& c, const std::string& uuid,
                          const std::vector<const AppMessage*>& ms) {
  std::optional<unsigned> xid;
  std::string reason;
  std::vector<std::string> ev;
  for (const AppMessage* m : ms) {
    if (m->xid && !xid) xid = m->xid;
    if (!m->detail.empty() && reason.empty()) reason = m->detail;
    ev.push_back(line_of(*m));
  }
  std::string why = "no reason in these lines";
  std::string remedy(kRestartPlugin);
  if (xid) {
    const XidInfo* x = lookup_xid(*xid);
    why = fmt::format("Xid {} ({})", *xid, x ? x->short_name : "unknown Xid");
    if (x) ev.push_back(fmt::format("Xid {}: {}", *xid, x->meaning));
  } else if (!reason.empty()) {
    why = reason;
    if (reason.find("too old") != std::string::npos)
      remedy =
          "The GPU is withheld only because the plugin cannot health-check it: run the plugin "
          "with health checks off for it (environment DP_DISABLE_HEALTHCHECKS=all, or the "
          "Xids to skip), then restart the plugin's pod.";
  }
  const GpuSeries* g = gpu_by_uuid(c, uuid);
  Finding f = make_finding(
      "container.device_unhealthy", Severity::kWarning, g,
      fmt::format("Kubernetes withholds GPU {}: the NVIDIA device plugin marked it unhealthy ({})",
                  uuid.empty() ? "(not named)" : uuid, why),
      std::move(ev), std::move(remedy));
  return f;
}

}  // namespace

void rule_container_device_unhealthy(const DiagnoseContext& c, Findings& out) {
  std::map<std::string, std::vector<const AppMessage*>> by_uuid;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kDeviceUnhealthy))
    by_uuid[m->gpu_uuid.value_or("")].push_back(m);
  for (const auto& [uuid, ms] : by_uuid) out.push_back(unhealthy_finding(c, uuid, ms));
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kNodeGpuResources)) {
    const auto w = withheld(*m);
    if (!w) continue;
    const unsigned gone = w->first - w->second;
    std::vector<std::string> ev = {fmt::format("Capacity nvidia.com/gpu {}, Allocatable {} ({})",
                                               w->first, w->second, m->origin)};
    if (!by_uuid.empty()) {
      out.back().evidence.push_back(ev.front());  // the node's view of the GPUs above
      continue;
    }
    out.push_back(make_finding(
        "container.device_unhealthy", Severity::kWarning, nullptr,
        fmt::format("Kubernetes withholds {} of the node's {} GPUs: the device plugin reported "
                    "them unhealthy",
                    gone, w->first),
        std::move(ev),
        "Find which GPU and why in the device plugin's log (kubectl logs on its pod: "
        "\"XidCriticalError\", \"marked unhealthy\") and the node's kernel log (Xids). " +
            std::string(kRestartPlugin)));
  }
}

void rule_container_plugin_no_devices(const DiagnoseContext& c, Findings& out) {
  const auto plugin = app_messages_of(c, AppMessageKind::kPluginNoDevices);
  std::vector<std::string> ev;
  for (const AppMessage* m : plugin) ev.push_back(line_of(*m));
  bool none_offered = false;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kNodeGpuResources)) {
    if (m->gpus_usable != 0u || (m->gpus_total && *m->gpus_total > 0)) continue;
    none_offered = true;
    ev.push_back(
        fmt::format("the node offers no nvidia.com/gpu to pods (Allocatable 0, {})", m->origin));
  }
  if (plugin.empty() && !none_offered) return;
  const bool no_nvml = !plugin.empty() && plugin.front()->detail.find("NVML") != std::string::npos;
  const std::string title =
      plugin.empty() ? "The node offers no GPUs to Kubernetes (Allocatable nvidia.com/gpu 0)"
                     : (no_nvml ? "The NVIDIA device plugin cannot load NVML and advertises no GPUs"
                                : "The NVIDIA device plugin found no GPUs and advertises none");
  out.push_back(make_finding(
      "container.plugin_no_devices", plugin.empty() ? Severity::kWarning : Severity::kCritical,
      nullptr, title, std::move(ev),
      "No GPU pod can run on this node until the plugin sees the GPUs. Check nvidia-smi on the "
      "host first (driver loaded, GPUs listed). If the host is fine, the plugin's container "
      "lacks the driver's libraries: run it with the NVIDIA runtime (runtimeClassName: nvidia, "
      "or nvidia as containerd's/CRI-O's default runtime via nvidia-ctk runtime configure), "
      "then restart the plugin's pod."));
}

void rule_container_admission_failed(const DiagnoseContext& c, Findings& out) {
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kGpuAdmissionFailed)) {
    std::vector<std::string> ev = {line_of(*m)};
    std::string remedy;
    const bool lost = m->detail.find("GPU is lost") != std::string::npos;
    if (lost) {
      ev.push_back("the device plugin could not list the GPUs: NVML says a GPU is lost");
      remedy =
          "A lost GPU makes the plugin fail every allocation on the node, so even its healthy "
          "GPUs take no pods: cordon and drain the node, reboot it to recover the GPU (see the "
          "GPU-lost finding), and replace the GPU if it falls off again.";
    } else {
      remedy =
          "The scheduler placed the pod on a node whose kubelet has no free GPU for it. Compare "
          "the node's Allocatable nvidia.com/gpu with the GPUs its pods hold (kubectl describe "
          "node), and look for devices the plugin marked unhealthy in its log; if neither "
          "explains it, the kubelet's device bookkeeping is stale: restart the kubelet.";
    }
    std::string title =
        m->gpus_total && m->gpus_usable
            ? fmt::format("The kubelet refused a GPU pod: {} GPU(s) requested, {} available",
                          *m->gpus_total, *m->gpus_usable)
            : "The kubelet refused a GPU pod: the device plugin's allocation failed";
    out.push_back(make_finding("container.admission_failed", Severity::kWarning, nullptr,
                               std::move(title), std::move(ev), std::move(remedy)));
  }
}

namespace {

// The toolkit's cause in the user's terms, and what to do about it.
std::pair<std::string, std::string> hook_cause_text(const std::string& cause) {
  auto has = [&](std::string_view w) { return cause.find(w) != std::string::npos; };
  if (has("driver not loaded"))
    return {"the NVIDIA kernel driver is not loaded on the host",
            "On the host: lsmod | grep nvidia and nvidia-smi. Load it (sudo modprobe nvidia); if "
            "it fails, the module was not built for the running kernel (dkms status; reinstall "
            "the driver), Secure Boot refuses it, or nouveau holds the GPU (blacklist it)."};
  if (has("load library failed") || has("libnvidia-ml"))
    return {"the host's user-space driver (libnvidia-ml.so.1) is not found",
            "Install the NVIDIA driver on the host (its user-space libraries, not only the kernel "
            "module), check ldconfig -p | grep libnvidia-ml, then retry."};
  if (has("unsatisfied condition: cuda"))
    return {"the image needs a newer CUDA than the host driver supports",
            "Upgrade the host driver to one that supports the image's CUDA (see the CUDA "
            "toolkit's driver table), or use an image built for an older CUDA."};
  if (has("unknown device"))
    return {"the container asked for a GPU the host does not have",
            "Check NVIDIA_VISIBLE_DEVICES / --gpus device=... against nvidia-smi -L on the "
            "host."};
  return {cause,
          "Run nvidia-container-cli -k -d /dev/tty info on the host to see where the toolkit "
          "stops, and fix the host driver or toolkit installation it names."};
}

}  // namespace

namespace {

// The driver version the capture shows working on the host (an nvidia-smi table, -q, a CSV),
// when it shows one.
std::optional<std::string> host_driver_seen(const DiagnoseContext& c) {
  for (const Snapshot& s : c.obs.samples)
    if (s.driver_version && !s.driver_version->empty()) return s.driver_version;
  if (c.obs.host && c.obs.host->smi_driver_version) return c.obs.host->smi_driver_version;
  return std::nullopt;
}

}  // namespace

namespace {

// The hook failing on NVML's driver/library mismatch: driver.version_mismatch carries the cause
// and the verdict; this says what it costs the containers.
void hook_mismatch_finding(const DiagnoseContext& c, Findings& out) {
  std::vector<std::string> ev;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kNvmlVersionMismatch))
    if (m->text.find("nvidia-container-cli") != std::string::npos ||
        m->text.find("error running hook") != std::string::npos)
      ev.push_back(line_of(*m));
  if (ev.empty()) return;
  ev.push_back(
      "nvidia-container-cli initialises NVML on the host before a GPU container starts; with the "
      "mismatch that fails for every container");
  out.push_back(make_finding(
      "container.hook_failed", Severity::kInfo, nullptr,
      "No GPU container can start: the NVIDIA container toolkit's hook fails on the driver/library "
      "version mismatch (see driver.version_mismatch)",
      std::move(ev), "Fix the mismatch (driver.version_mismatch); the hook then passes."));
}

}  // namespace

void rule_container_hook_failed(const DiagnoseContext& c, Findings& out) {
  hook_mismatch_finding(c, out);
  std::map<std::string, std::vector<const AppMessage*>> by_cause;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kContainerHookFailed))
    by_cause[m->detail].push_back(m);
  for (const auto& [cause, ms] : by_cause) {
    std::vector<std::string> ev;
    for (const AppMessage* m : ms) ev.push_back(line_of(*m));
    ev.push_back("nvidia-container-cli says: " + cause);
    auto [what, remedy] = hook_cause_text(cause);
    // The library "not found" while the same capture shows the host's driver at work: the
    // toolkit looks in the wrong place, the driver is there.
    const auto driver = host_driver_seen(c);
    if (driver && (cause.find("libnvidia-ml") != std::string::npos ||
                   cause.find("load library failed") != std::string::npos)) {
      what =
          "the toolkit cannot find the host's libnvidia-ml.so.1, although the host's driver "
          "works";
      ev.push_back(
          fmt::format("the capture shows the host's driver {} answering nvidia-smi", *driver));
      remedy =
          "The driver is installed; the toolkit does not find its library. Check ldconfig -p | "
          "grep libnvidia-ml on the host and the ldconfig path in "
          "/etc/nvidia-container-runtime/config.toml (\"@/sbin/ldconfig\" or "
          "\"/sbin/ldconfig.real\" per distribution); a Docker installed from snap or rootless "
          "Docker sees another filesystem: use the distribution's Docker, or the toolkit's CDI "
          "mode (nvidia-ctk cdi generate) and retry.";
    }
    out.push_back(make_finding(
        "container.hook_failed", Severity::kCritical, nullptr,
        fmt::format("No GPU container can start: the NVIDIA container toolkit's hook fails "
                    "because {}",
                    what),
        std::move(ev), std::move(remedy)));
  }
}

}  // namespace gw
