// Rules over the driver messages of the kernel log that are not Xids (DriverMessageKind):
// adapter init failures, the open-module requirement, reset required without an Xid, GSP
// heartbeat timeouts, API mismatch, devices the driver did not probe, and hung tasks next to
// GPU errors.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/context.h"
#include "diagnose/driver_groups.h"
#include "diagnose/kernel_events.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

using K = DriverMessageKind;

// Context lines (assertions, "Cannot initialize GSP firmware RM") this close to a message
// belong to it.
constexpr double kContextS = 5.0;
// Hung tasks this close to a GPU error are waiting on it.
constexpr double kHungNearS = 600.0;

// "... the version 515.48.07, but" -> "515.48.07" (the token after `tag`).
std::string version_after(std::string_view msg, std::string_view tag) {
  const size_t p = msg.find(tag);
  if (p == std::string_view::npos) return {};
  auto rest = msg.substr(p + tag.size());
  size_t e = 0;
  while (e < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[e])) || rest[e] == '.'))
    ++e;
  auto v = rest.substr(0, e);
  while (!v.empty() && v.back() == '.') v.remove_suffix(1);
  return std::string(v);
}

// Context lines about the same GPU (or naming none) close to `e`.
void add_context(const DiagnoseContext& c, const DriverGpuMap& m, const DriverGroup& g,
                 std::vector<std::string>& ev, size_t max_lines = 3) {
  size_t n = 0;
  for (const Event& o : c.obs.events) {
    if (o.driver_kind != K::kDriverAssert) continue;
    const std::string key = gpu_key(c, o, m);
    if (!key.empty() && key != g.key) continue;
    const Event& first = *g.events.front();
    const auto gap = seconds_between(first, o);
    if (gap ? (*gap < -kContextS || *gap > kContextS)
            : o.origin.substr(0, o.origin.rfind(':')) !=
                  first.origin.substr(0, first.origin.rfind(':')))
      continue;
    ev.push_back("driver: " + o.message.substr(0, 160));
    if (++n >= max_lines) break;
  }
}

bool has_group(const std::vector<DriverGroup>& gs, const std::string& key) {
  return std::any_of(gs.begin(), gs.end(), [&](const DriverGroup& g) { return g.key == key; });
}

// A GPU error a hung task may be waiting on.
bool is_gpu_error(const Event& e) {
  if (e.kind == EventKind::kXid || e.kind == EventKind::kFallenOffBus ||
      e.kind == EventKind::kGpuLost)
    return true;
  if (e.kind != EventKind::kDriverMessage || !e.driver_kind) return false;
  switch (*e.driver_kind) {
    case K::kInitFailed:
    case K::kResetRequired:
    case K::kGspTimeout:
      return true;
    default:
      return false;
  }
}

// An Xid that an application's own work causes (13, 31, 43, 45, ...): no GPU fault.
bool is_application_xid(const Event& e) {
  if (e.kind != EventKind::kXid || !e.code) return false;
  const XidInfo* x = lookup_xid(*e.code);
  return x && x->cause == XidCause::kApplication;
}

std::string file_of(const Event& e) {
  return e.origin.substr(0, e.origin.rfind(':'));
}

}  // namespace

void rule_driver_init_failed(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kInitFailed)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  const auto open = driver_groups(c, m, K::kOpenModulesRequired);
  for (const DriverGroup& g : driver_groups(c, m, K::kInitFailed)) {
    std::vector<std::string> ev = g.summary();
    add_context(c, m, g, ev);
    const bool needs_open = has_group(open, g.key);
    std::string remedy;
    if (needs_open) {
      ev.push_back("the driver also says this GPU requires the open kernel modules");
      remedy =
          "Install the open kernel modules of the same driver version (see "
          "driver.open_modules_required), then reboot; the GPU itself is not at fault.";
    } else {
      remedy =
          "The GPU is unusable until the driver initialises it: reboot (power-cycle if it may be "
          "in a bad state). If it persists, check that this driver supports the GPU (for 'Cannot "
          "initialize GSP firmware RM' try another driver branch), check its power cables and "
          "seating and the kernel log for PCIe/AER errors or Xid 79 before it, then run the "
          "vendor's diagnostics or open an RMA.";
    }
    out.push_back(make_driver_finding("driver.init_failed", Severity::kCritical, g,
                                      fmt::format("Driver could not initialise {}: "
                                                  "RmInitAdapter failed",
                                                  g.who()),
                                      std::move(ev), std::move(remedy)));
  }
}

void rule_driver_open_modules_required(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kOpenModulesRequired)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  for (const DriverGroup& g : driver_groups(c, m, K::kOpenModulesRequired)) {
    std::vector<std::string> ev = g.summary();
    ev.push_back("a driver-install problem, not a hardware fault");
    out.push_back(make_driver_finding(
        "driver.open_modules_required", Severity::kCritical, g,
        fmt::format("{} needs the NVIDIA open kernel modules; the proprietary ones are loaded",
                    g.who()),
        std::move(ev),
        "Install the open flavour of the same driver version (Ubuntu/Debian: the "
        "nvidia-driver-<branch>-open or nvidia-open package; the .run installer: -m=kernel-open), "
        "remove the proprietary kernel-module package, rebuild the initramfs and reboot."));
  }
}

void rule_driver_reset_required(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kResetRequired)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  // With an Xid on the same GPU, the Xid finding carries the driver's words.
  std::set<std::string> with_xid;
  for (const Event& e : c.obs.events) {
    if (e.kind == EventKind::kXid) with_xid.insert(gpu_key(c, e, m));
  }
  // A GPU the driver could not initialise: driver.init_failed says so and its remedy resets it.
  const auto init_failed = driver_groups(c, m, K::kInitFailed);
  for (const DriverGroup& g : driver_groups(c, m, K::kResetRequired)) {
    if (!g.key.empty() && (with_xid.count(g.key) || has_group(init_failed, g.key))) continue;
    std::vector<std::string> ev = g.summary();
    add_context(c, m, g, ev);
    ev.push_back("no Xid on this GPU in the log: the driver reports the reset need directly");
    out.push_back(make_driver_finding(
        "driver.reset_required", Severity::kCritical, g,
        fmt::format("Driver says {} needs a reset (no Xid)", g.who()), std::move(ev),
        "Stop the jobs on this GPU and reset it (sudo nvidia-smi -r -i <gpu>) or reboot the node; "
        "CUDA calls on it fail ('busy or unavailable') until then. If it returns, update the "
        "driver and collect nvidia-bug-report.sh for NVIDIA."));
  }
}

// Driver assertions are context of the errors they come with; on a GPU where nothing else
// went wrong they are still the driver saying something failed ("Cannot initialize GSP
// firmware RM", "kgspInitRm_IMPL: unexpected WPR2 already up"), never a healthy log.
void rule_driver_assertion(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kDriverAssert)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  std::set<std::string> explained;
  bool any_error = false;
  // What the assertions may be the context of: GPU errors, and the driver's other failures
  // (API mismatch, no device probed, a fault in its module, open modules required).
  const auto explains = [](const Event& e) {
    if (is_gpu_error(e)) return true;
    if (e.kind != EventKind::kDriverMessage || !e.driver_kind) return false;
    switch (*e.driver_kind) {
      case K::kApiMismatch:
      case K::kNoDeviceProbed:
      case K::kKernelFault:
      case K::kKernelWarning:
      case K::kOpenModulesRequired:
        return true;
      default:
        return false;
    }
  };
  for (const Event& e : c.obs.events) {
    if (!explains(e)) continue;
    any_error = true;
    explained.insert(gpu_key(c, e, m));
  }
  for (const DriverGroup& g : driver_groups(c, m, K::kDriverAssert)) {
    // An assertion naming no GPU beside any GPU error is that error's context.
    if (explained.count(g.key) || (g.key.empty() && any_error)) continue;
    std::vector<std::string> ev = g.summary();
    ev.push_back("no Xid, reset request or GSP timeout on this GPU in the log");
    out.push_back(make_driver_finding(
        "driver.assertion", Severity::kWarning, g,
        fmt::format("The NVIDIA driver failed an internal check on {}", g.who()), std::move(ev),
        "Read the lines: a failed GSP start ('Cannot initialize GSP', 'WPR2 already up') needs a "
        "GPU reset (sudo nvidia-smi -r) or a reboot, not a driver reload; otherwise watch for "
        "Xids on this GPU, update the driver and send nvidia-bug-report.sh to NVIDIA."));
  }
}

void rule_driver_gsp_timeout(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kGspTimeout)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  for (const DriverGroup& g : driver_groups(c, m, K::kGspTimeout)) {
    std::vector<std::string> ev = g.summary();
    for (const Event* e : g.events) {
      const size_t hb = e->message.find(" heartbeat ");
      const size_t diff = e->message.find(" diff ");
      if (hb == std::string::npos || diff == std::string::npos) continue;
      const auto beat = leading_uint(std::string_view(e->message).substr(hb + 11));
      const auto ms = leading_uint(std::string_view(e->message).substr(diff + 6));
      if (beat && ms)
        ev.push_back(fmt::format("heartbeat counter {}{}, {} ms ({:.1f} min) since the last beat",
                                 *beat, *beat == 0 ? " (it never advanced)" : "", *ms,
                                 *ms / 60000.0));
      break;
    }
    // Assertions and RPC events of the same GPU, with where they fired.
    std::map<std::string, size_t> asserts;
    size_t rpc = 0;
    for (const Event& o : c.obs.events) {
      if (o.driver_kind != K::kDriverAssert || gpu_key(c, o, m) != g.key) continue;
      if (o.message.find("_kgspProcessRpcEvent") != std::string::npos) {
        ++rpc;
        continue;
      }
      const size_t at = o.message.rfind(" @ ");
      ++asserts[at == std::string::npos ? std::string("assertion") : o.message.substr(at + 3)];
    }
    for (const auto& [where, n] : asserts)
      ev.push_back(fmt::format("{} driver assertion(s) at {}", n, where));
    if (rpc > 0) ev.push_back(fmt::format("{} GSP RPC event line(s) alongside", rpc));
    bool xid = false;
    for (const Event& o : c.obs.events) {
      if (o.kind == EventKind::kXid && gpu_key(c, o, m) == g.key) xid = true;
    }
    if (!xid) ev.push_back("no Xid on this GPU in the log");
    const bool heartbeat = std::any_of(g.events.begin(), g.events.end(), [](const Event* e) {
      return e->message.find("eartbeat timed out") != std::string::npos;
    });
    out.push_back(make_driver_finding(
        "driver.gsp_timeout", Severity::kWarning, g,
        (heartbeat ? "GSP firmware heartbeat timed out on "
                   : "GSP firmware did not answer a driver call in time on ") +
            g.who(),
        std::move(ev),
        "A driver/GSP-firmware problem, not a hardware verdict: update to a newer driver branch "
        "and report it to NVIDIA with nvidia-bug-report.sh. Watch for Xid 119/154 or the GPU "
        "falling off the bus; if the GPU stops answering, reset it or reboot. Around suspend or "
        "runtime power management, try keeping the GPU awake (nvidia-persistenced)."));
  }
}

void rule_driver_api_mismatch(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kApiMismatch)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  for (const DriverGroup& g : driver_groups(c, m, K::kApiMismatch)) {
    const std::string& msg = g.events.front()->message;
    const std::string client = version_after(msg, "client has the version ");
    const std::string module = version_after(msg, "kernel module has the version ");
    std::vector<std::string> ev = g.summary();
    if (!client.empty() && !module.empty())
      ev.push_back(fmt::format("user-space driver {} vs loaded kernel module {}", client, module));
    // Its consequences, which driver.version_mismatch would otherwise report apart.
    if (c.obs.source_error && c.obs.source_error->code == "nvml.lib_rm_version_mismatch")
      ev.push_back("the same mismatch stops NVML: " + c.obs.source_error->to_string());
    for (const AppMessage& a : c.obs.app_messages) {
      if (a.kind == AppMessageKind::kNvmlVersionMismatch) {
        ev.push_back("the same mismatch makes this fail: " + a.text.substr(0, 160));
        const auto hook = [](const std::string& t) {
          return t.find("nvidia-container-cli") != std::string::npos ||
                 t.find("error running hook") != std::string::npos;
        };
        if (hook(a.text) || hook(a.detail))
          ev.push_back("the container runtime hook fails on it: GPU containers cannot start");
        break;
      }
    }
    if (c.obs.host && c.obs.host->kernel_module_version)
      ev.push_back("loaded kernel module: " + *c.obs.host->kernel_module_version);
    Finding f = make_driver_finding(
        "driver.api_mismatch", Severity::kCritical, g,
        client.empty() || module.empty()
            ? std::string("Driver user-space and kernel module versions differ")
            : fmt::format("Driver user-space {} does not match the loaded kernel module {}", client,
                          module),
        std::move(ev),
        fmt::format("The driver was installed or upgraded{} while the old kernel module stayed "
                    "loaded. Reboot, or stop every GPU process and reload the modules (sudo rmmod "
                    "nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia); check "
                    "that the {} kernel module was built for the running kernel (dkms status). "
                    "GPU containers fail to start until then.",
                    client.empty() ? "" : " to " + client, client.empty() ? "new" : client));
    f.gpu.reset();  // a host-wide problem
    out.push_back(std::move(f));
  }
}

namespace {

// What the driver's notice for a GPU it does not support names, over its lines: the GPU, the
// legacy branch that supports it, and the driver that ignores it.
struct Unsupported {
  std::string gpu, branch, driver, origin;
};

std::string word_before(std::string_view t, size_t at) {
  while (at > 0 && t[at - 1] == ' ') --at;
  size_t b = at;
  while (b > 0 && t[b - 1] != ' ') --b;
  return std::string(t.substr(b, at - b));
}

std::optional<Unsupported> unsupported_gpu(const DiagnoseContext& c) {
  std::string text, origin;
  for (const Event& e : c.obs.events) {
    if (e.driver_kind != K::kGpuUnsupported) continue;
    if (origin.empty()) origin = e.origin;
    if (text.size() < 2048) text += " " + e.message;
  }
  if (origin.empty()) return std::nullopt;
  const std::string_view t = text;
  Unsupported u;
  u.origin = origin;
  if (size_t a = t.find("The NVIDIA "); a != std::string_view::npos) {
    const std::string_view rest = t.substr(a + 11);
    const size_t e = rest.substr(0, 4) == "GPU " ? rest.find(')') + 1 : rest.find(" GPU");
    if (e != std::string_view::npos && e > 0 && e < 80) u.gpu = std::string(rest.substr(0, e));
  }
  if (size_t l = t.find(".xx Legacy"); l != std::string_view::npos)
    u.branch = word_before(t, l) + ".xx";
  if (size_t d = t.find(" NVIDIA driver will ignore"); d != std::string_view::npos)
    u.driver = word_before(t, d);
  else if (size_t r = t.find(" driver release."); r != std::string_view::npos)
    u.driver = word_before(t, r);
  return u;
}

// The finding's words when the driver's notice says why it drove no GPU: it does not support it.
void say_unsupported(const Unsupported& u, std::string& title, std::vector<std::string>& ev,
                     std::string& remedy) {
  const std::string gpu = u.gpu.empty() ? std::string("a GPU") : "the " + u.gpu;
  title = fmt::format("The NVIDIA driver{} does not support {}: it ignores the GPU{}",
                      u.driver.empty() ? "" : " " + u.driver, gpu,
                      u.branch.empty() ? "" : " (supported by the " + u.branch + " legacy driver)");
  ev.push_back(fmt::format("the driver's notice at {}: {} is not supported by this driver{}",
                           u.origin, gpu,
                           u.branch.empty() ? "" : ", only by the " + u.branch + " legacy branch"));
  remedy = u.branch.empty()
               ? "Install a driver branch that lists this GPU (the README's Appendix A, "
                 "'Supported NVIDIA GPU Products'), or move the workload to a supported GPU."
               : fmt::format(
                     "Install the {} legacy driver branch (the last to support this GPU) "
                     "and hold it against upgrades, or move the workload to a GPU the "
                     "current branch supports; the CUDA toolkits a {} driver runs cap "
                     "the framework versions you can use.",
                     u.branch, u.branch);
}

// What the probe lines say: devices the probe was not called for (another driver owns them),
// devices it failed for, and the candidate drivers the kernel names.
struct ProbeFacts {
  std::optional<unsigned> not_called, failed;
  std::string candidates;
};

ProbeFacts probe_facts(const std::vector<DriverGroup>& groups) {
  ProbeFacts f;
  for (const DriverGroup& g : groups) {
    for (const Event* e : g.events) {
      const std::string& t = e->message;
      if (size_t p = t.find("not called for "); p != std::string::npos)
        f.not_called = leading_uint(std::string_view(t).substr(p + 15));
      if (size_t p = t.find("failed for "); p != std::string::npos && t.find("probe") != t.npos)
        f.failed = leading_uint(std::string_view(t).substr(p + 11));
      if (size_t p = t.find("such as:"); p != std::string::npos && f.candidates.empty()) {
        auto rest = trim_text(std::string_view(t).substr(p + 8));
        const size_t end = rest.find(" NVRM");
        f.candidates =
            std::string(trim_text(rest.substr(0, std::min(rest.find(" was loaded"), end))));
      }
    }
  }
  return f;
}

}  // namespace

void rule_driver_no_device_probed(const DiagnoseContext& c, Findings& out) {
  const std::optional<Unsupported> unsupported = unsupported_gpu(c);
  if (!any_driver_event(c, K::kNoDeviceProbed) && !unsupported) return;
  const DriverGpuMap m = driver_gpu_map(c);
  auto groups = driver_groups(c, m, K::kNoDeviceProbed);
  if (groups.empty() && !unsupported) return;
  // One host-wide finding: the lines name no GPU.
  std::vector<std::string> ev;
  for (const DriverGroup& g : groups)
    for (auto& s : g.summary()) ev.push_back(s);
  auto [not_called, failed, candidates] = probe_facts(groups);
  std::string title, remedy;
  if (not_called) {
    title = fmt::format(
        "NVIDIA driver bound to no GPU: its probe routine was not called for {} "
        "device(s)",
        *not_called);
    ev.push_back("the driver counts the devices, but another kernel driver claimed them first" +
                 (candidates.empty() ? std::string() : " (it names: " + candidates + ")"));
    remedy =
        "Find the driver bound to the GPUs (lspci -k -d 10de:) - nouveau, rivafb, nvidiafb, "
        "rivatv, or vfio-pci on a passthrough host; blacklist or unbind it (e.g. blacklist nouveau "
        "in /etc/modprobe.d and rebuild the initramfs), then reload the nvidia module or reboot.";
  } else if (failed) {
    title = fmt::format("NVIDIA driver probe failed for {} device(s)", *failed);
    remedy =
        "The driver tried and failed: read the lines before it (RmInitAdapter failed, fallen off "
        "the bus, open modules required) and follow that finding; reboot and reseat if none.";
  } else {
    title = "NVIDIA driver found no GPU to drive";
    remedy =
        "Check lspci -nn -d 10de: - no device: the GPU is not visible on the bus (seating, power "
        "cables, BIOS settings such as Above 4G decoding); a device: another driver owns it "
        "(lspci -k) or the installed driver does not support it.";
  }
  if (unsupported) {
    say_unsupported(*unsupported, title, ev, remedy);
    not_called.reset();
    failed.reset();
  }
  // A failed probe after the GPU fell off the bus or failed to initialise is that error's
  // consequence: said, but the error's own finding carries the verdict.
  bool explained = false;
  for (const Event& e : c.obs.events)
    explained = explained || e.kind == EventKind::kFallenOffBus ||
                e.driver_kind == K::kInitFailed || e.driver_kind == K::kOpenModulesRequired;
  if (failed && !not_called && explained) {
    title += " (a consequence of the GPU error before it)";
    ev.push_back(
        "the driver's probe fails for a GPU it cannot initialise: the lost GPU or failed "
        "initialisation in the same log is the cause");
  }
  Finding f;
  f.code = "driver.no_device_probed";
  f.severity = failed && !not_called && explained ? Severity::kInfo : Severity::kCritical;
  f.title = std::move(title);
  f.evidence = std::move(ev);
  f.remedy = std::move(remedy);
  out.push_back(std::move(f));
}

namespace {

// The GPU errors near one hung task: the first, and whether any of them is a GPU fault rather
// than an application's Xid.
struct NearErrors {
  const Event* first = nullptr;
  bool fault = false;
};
NearErrors near_errors(const std::vector<const Event*>& errors, const Event& task) {
  NearErrors n;
  for (const Event* e : errors) {
    const auto gap = seconds_between(*e, task);
    if (!(gap ? std::abs(*gap) <= kHungNearS : file_of(*e) == file_of(task))) continue;
    if (!n.first) n.first = e;
    n.fault = n.fault || !is_application_xid(*e);
  }
  return n;
}

Finding hung_task_finding(const std::string& names, std::vector<std::string> ev, bool fault) {
  Finding f;
  f.code = "kernel.hung_task";
  if (fault) {
    ev.push_back(
        "context, not a separate fault: these tasks wait in the kernel (D state) on the GPU");
    f.severity = Severity::kInfo;
    f.title = "Tasks hung in the kernel next to GPU errors: " + names;
    f.remedy =
        "Handle the GPU error (see the other findings); the stuck tasks clear when the GPU is "
        "reset or the node rebooted. They cannot be killed while in D state.";
  } else {
    // The Xids near it only say an application's work was stopped: that is no fault, but a
    // task still stuck in the kernel afterwards means the teardown did not finish.
    ev.push_back(
        "the GPU errors near them are application events (work stopped, channels torn down); a "
        "task stuck in D state after them means the driver's cleanup did not finish");
    f.severity = Severity::kWarning;
    f.title = "Tasks stuck in the kernel after an application's GPU work was torn down: " + names;
    f.remedy =
        "Drain the node: GPU tools (nvidia-smi) and new jobs may hang on it. If the tasks do not "
        "clear within minutes, reset the GPU (nvidia-smi -r) or reboot; they cannot be killed "
        "while in D state.";
  }
  f.evidence = std::move(ev);
  return f;
}

}  // namespace

void rule_kernel_hung_task(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kHungTask)) return;
  const DriverGpuMap m = driver_gpu_map(c);
  auto groups = driver_groups(c, m, K::kHungTask);
  if (groups.empty()) return;
  std::vector<const Event*> errors;
  for (const Event& e : c.obs.events) {
    if (is_gpu_error(e)) errors.push_back(&e);
  }
  if (errors.empty()) return;
  std::vector<std::string> tasks, ev;
  const Event* near_error = nullptr;
  bool fault_near = false;
  for (const DriverGroup& g : groups) {
    for (const Event* t : g.events) {
      const NearErrors near = near_errors(errors, *t);
      if (!near.first) continue;
      if (!near_error) near_error = near.first;
      fault_near = fault_near || near.fault;
      std::string name = t->process_name.value_or("?");
      if (t->pid) name += fmt::format(" (pid {})", *t->pid);
      if (std::find(tasks.begin(), tasks.end(), name) == tasks.end() && tasks.size() < 6)
        tasks.push_back(name);
      if (ev.size() < 3)
        ev.push_back(fmt::format("{}: {}", event_when(*t), t->message.substr(0, 140)));
    }
  }
  if (!near_error) return;
  std::string names;
  for (const auto& t : tasks) names += (names.empty() ? "" : ", ") + t;
  ev.push_back(fmt::format("next to the GPU error at {}: {}", event_when(*near_error),
                           near_error->message.substr(0, 120)));
  out.push_back(hung_task_finding(names, std::move(ev), fault_near));
}

}  // namespace gw
