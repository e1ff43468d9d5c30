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

// The most telling cause among the fabric manager's failure lines: a version mismatch or a bad
// configuration says why; "failed" lines (systemd's exit status) only that it did.
const AppMessage* main_cause(const std::vector<const AppMessage*>& failed) {
  for (std::string_view cause :
       {"version mismatch", "configuration", "nothing to manage", "not running"})
    for (const AppMessage* m : failed)
      if (m->detail.rfind(cause, 0) == 0) return m;
  return failed.front();
}

std::string fabric_manager_remedy(const AppMessage& m) {
  if (m.detail.rfind("version mismatch", 0) == 0)
    return fmt::format(
        "Install the fabric manager of exactly the loaded driver's version{} (Debian/Ubuntu: "
        "nvidia-fabricmanager-<branch>=<version>; RHEL: nvidia-fabric-manager-<version>), or "
        "the driver of the fabric manager's version; hold both packages together (apt-mark "
        "hold / dnf versionlock) so an upgrade cannot split them again; then systemctl "
        "restart nvidia-fabricmanager.",
        m.driver_version ? " (" + *m.driver_version + ")" : std::string());
  if (m.detail.rfind("nothing to manage", 0) == 0 || m.detail.rfind("not running", 0) == 0)
    return "Without NVSwitches (PCIe GPUs, NVLink bridges) the fabric manager is not needed: "
           "systemctl disable --now nvidia-fabricmanager. On HGX/DGX systems it is: check that "
           "the NVSwitch devices are there (ls /dev/nvidia-nvswitch*, lspci | grep -i bridge); "
           "on B200, B300 and later it also needs NVLSM (the nvlsm package) and the InfiniBand "
           "driver for the NVSwitch management ports.";
  if (m.detail.rfind("configuration", 0) == 0)
    return "Fix the named item in /usr/share/nvidia/nvswitch/fabricmanager.cfg (or restore the "
           "package's file), then systemctl restart nvidia-fabricmanager.";
  return "Read why it stopped: journalctl -u nvidia-fabricmanager -b and "
         "/var/log/fabricmanager.log. Its version must equal the driver's; then systemctl "
         "restart nvidia-fabricmanager and check each GPU's fabric State (nvidia-smi -q | grep "
         "-A 3 Fabric).";
}

// Whether `a`'s newest copy was read after `b`'s (AppMessage::read_at; where a message was
// never counted, the place in the list).
bool read_later(const AppMessage& a, const AppMessage& b) {
  if (a.read_at != 0 && b.read_at != 0) return a.read_at > b.read_at;
  return &a > &b;
}

const AppMessage* newest_read(const std::vector<const AppMessage*>& ms) {
  const AppMessage* out = nullptr;
  for (const AppMessage* m : ms)
    if (out == nullptr || read_later(*m, *out)) out = m;
  return out;
}

bool is_nvswitch_error(const AppMessage* m) {
  return m->detail.rfind("nvswitch: ", 0) == 0;
}

// The fabric manager's failures, or the NVSwitch errors its log reports (`nvswitch` true).
std::vector<const AppMessage*> fabric_manager_lines(const DiagnoseContext& c, bool nvswitch) {
  std::vector<const AppMessage*> out;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kFabricManagerFailed))
    if (is_nvswitch_error(m) == nvswitch) out.push_back(m);
  return out;
}

bool some_gpu_unregistered(const DiagnoseContext& c) {
  for (const GpuSeries& g : c.gpus)
    if (const GpuSample* s = g.last(); s && (s->fabric_state == FabricState::kNotStarted ||
                                             s->fabric_state == FabricState::kInProgress))
      return true;
  return false;
}

}  // namespace

// The fabric manager's own lines say it failed. Until it runs, no GPU of an NVSwitch system
// registers and CUDA refuses them all (error 802); it is often the cause behind
// gpu.fabric_not_ready. "Nothing to manage" on a system without NVSwitches is harmless.
void rule_fabricmanager_failed(const DiagnoseContext& c, Findings& out) {
  const auto failed = fabric_manager_lines(c, false);
  if (failed.empty()) return;
  const auto started = app_messages_of(c, AppMessageKind::kFabricManagerStarted);
  const AppMessage& cause = *main_cause(failed);
  // Started after its last failure (read order: copies are folded into the first): it runs now.
  const AppMessage* last_start = newest_read(started);
  const bool recovered = last_start != nullptr && read_later(*last_start, *newest_read(failed));
  const bool harmless =
      cause.detail.rfind("nothing to manage", 0) == 0 || cause.detail.rfind("not running", 0) == 0;
  const bool needless = harmless && !some_gpu_unregistered(c);  // no NVSwitch waits for it
  const Severity sev = recovered || needless ? Severity::kWarning : Severity::kCritical;
  std::vector<std::string> ev{fmt::format("{}: {}", cause.origin, cause.text)};
  for (const AppMessage* m : failed)
    if (m != &cause && ev.size() < 4) ev.push_back(fmt::format("{}: {}", m->origin, m->text));
  if (const size_t all = copies_of(failed); all > ev.size())
    ev.push_back(fmt::format("{} failure line(s) in all", all));
  // A start the input holds more than once is kept with its first copy's place.
  if (recovered && last_start->copies > 1)
    ev.push_back(fmt::format("then, the newest of {} such lines (the first at {}): {}",
                             last_start->copies, last_start->origin, last_start->text));
  else if (recovered)
    ev.push_back(fmt::format("then {}: {}", last_start->origin, last_start->text));
  std::string title = fmt::format("NVIDIA Fabric Manager failed ({})", cause.detail);
  if (cause.driver_version) title += fmt::format(" against driver {}", *cause.driver_version);
  title += recovered ? "; it started later"
                     : ": GPUs on NVSwitches cannot register, CUDA refuses them (error 802)";
  if (needless && !recovered)
    title = fmt::format("NVIDIA Fabric Manager does not run ({}): harmless without NVSwitches",
                        cause.detail);
  out.push_back(make_finding("fabricmanager.failed", sev, nullptr, std::move(title), std::move(ev),
                             fabric_manager_remedy(cause)));
}

// The affirmative answer: the fabric manager's lines show it started and configured the
// NVSwitches, with no failure of it in the capture.
void rule_fabricmanager_running(const DiagnoseContext& c, Findings& out) {
  const auto started = app_messages_of(c, AppMessageKind::kFabricManagerStarted);
  if (started.empty() || !fabric_manager_lines(c, false).empty()) return;
  std::vector<std::string> ev;
  for (const AppMessage* m : started)
    if (ev.size() < 3) ev.push_back(fmt::format("{}: {}", m->origin, m->text));
  out.push_back(make_finding(
      "fabricmanager.running", Severity::kInfo, nullptr,
      "NVIDIA Fabric Manager started and runs: the NVSwitches are configured", std::move(ev)));
}

// fabricmanager.log's "detected NVSwitch non-fatal error 12028 ... port 61": the switch
// corrected it (a warning, worth counting per port); a fatal one stops NVLink traffic through
// that switch until the GPUs and switches are reset.
void rule_fabricmanager_nvswitch_error(const DiagnoseContext& c, Findings& out) {
  const auto errors = fabric_manager_lines(c, true);
  if (errors.empty()) return;
  bool fatal = false;
  std::vector<std::string> ev;
  for (const AppMessage* m : errors) {
    fatal = fatal || m->detail.find("NVSwitch fatal error") != std::string::npos;
    if (ev.size() < 4) ev.push_back(fmt::format("{}: {}", m->origin, m->text));
  }
  const size_t all = copies_of(errors);
  if (all > ev.size()) ev.push_back(fmt::format("{} such line(s) in all", all));
  std::string_view first = errors.front()->detail;
  first.remove_prefix(std::string_view("nvswitch: ").size());
  out.push_back(make_finding(
      "fabricmanager.nvswitch_error", fatal ? Severity::kCritical : Severity::kWarning, nullptr,
      fmt::format("The fabric manager reports {} NVSwitch error(s){}: {}", all,
                  fatal ? ", a fatal one among them" : "", first),
      std::move(ev),
      fatal ? "A fatal NVSwitch error stops NVLink traffic through that switch: drain the node, "
              "reset the GPUs and NVSwitches (or reboot), check SXid lines in the kernel log for "
              "the same switch; a switch or port that repeats it goes to the vendor."
            : "Non-fatal NVSwitch errors are corrected by the switch. Count them per switch and "
              "port (this log, SXid lines in the kernel log): a port that repeats them points at "
              "a link or the baseboard; check nvidia-smi nvlink -e on the GPUs behind it."));
}

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

// Registered, but NVML flags the fabric (R550+ health mask; -q "Fabric > Health"): a GPU whose
// routes are unhealthy or misconfigured loses NVLink traffic (collectives hang or fall back);
// degraded bandwidth or a recovery under way slows them.
void rule_gpu_fabric_unhealthy(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    const GpuSample* s = g.last();
    if (!s || s->fabric_state != FabricState::kCompleted || s->fabric_healthy != false) continue;
    const std::string& h = s->fabric_health;
    const bool severe = h.find("Unhealthy") != std::string::npos ||
                        h.find("Incorrect Configuration") != std::string::npos;
    std::vector<std::string> ev{fmt::format("fabric State Completed, Status {}; Health: {}",
                                            s->fabric_status.empty() ? "N/A" : s->fabric_status,
                                            h)};
    size_t flagged = 0;
    for (const GpuSample* earlier : g.samples)
      if (earlier->fabric_healthy == false) ++flagged;
    if (g.samples.size() > 1)
      ev.push_back(fmt::format("flagged in {} of {} samples", flagged, g.samples.size()));
    out.push_back(make_finding(
        "gpu.fabric_unhealthy", severe ? Severity::kCritical : Severity::kWarning, &g,
        fmt::format("{}'s NVSwitch fabric is registered but unhealthy: {}", gpu_label(g), h),
        std::move(ev)));
  }
}

}  // namespace gw
