// Driver, CUDA and configuration rules: no GPU visible and why, driver/library mismatch,
// driver too old for the installed CUDA, persistence mode, application clocks, MIG, compute mode.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "diagnose/context.h"
#include "diagnose/driver_groups.h"
#include "diagnose/rules.h"

namespace gw {

// The running driver's version: NVML's (or a captured nvidia-smi's) answer first, else the
// kernel module's (/proc/driver/nvidia/version, collect_env's "Nvidia driver version").
std::optional<DriverVersion> running_driver(const DiagnoseContext& c) {
  for (auto it = c.obs.samples.rbegin(); it != c.obs.samples.rend(); ++it) {
    if (it->driver_version) {
      if (auto v = parse_driver_version(*it->driver_version)) return v;
    }
  }
  // Captured reports (nvidia-smi banner, collect_env) state the user-space driver.
  if (c.obs.host && c.obs.host->smi_driver_version) {
    if (auto v = parse_driver_version(*c.obs.host->smi_driver_version); v && (*v)[0] >= 100)
      return v;
  }
  if (c.obs.host && c.obs.host->kernel_module_version) {
    // Accept "535.129.03" or a whole /proc/driver/nvidia/version line.
    const std::string& text = *c.obs.host->kernel_module_version;
    for (size_t i = 0; i < text.size(); ++i) {
      if (std::isdigit(static_cast<unsigned char>(text[i])) && (i == 0 || text[i - 1] == ' ')) {
        const size_t end = text.find(' ', i);
        auto v = parse_driver_version(std::string_view(text).substr(i, end - i));
        if (v && (*v)[0] >= 100) return v;
      }
    }
  }
  return std::nullopt;
}

std::optional<int> driver_max_cuda(const DiagnoseContext& c) {
  for (auto it = c.obs.samples.rbegin(); it != c.obs.samples.rend(); ++it) {
    if (it->cuda_driver_version) return it->cuda_driver_version;
  }
  if (c.obs.host && c.obs.host->smi_cuda_version) {
    // "10.1" -> 10010, NVML's encoding.
    unsigned major = 0, minor = 0;
    const std::string& v = *c.obs.host->smi_cuda_version;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), major);
    if (r.ec == std::errc{} && major > 0 && major < 100) {
      if (r.ptr != v.data() + v.size() && *r.ptr == '.')
        std::from_chars(r.ptr + 1, v.data() + v.size(), minor);
      return static_cast<int>(major * 1000 + std::min(minor, 9u) * 10);
    }
  }
  return std::nullopt;
}

namespace {

bool is_mismatch(const DiagnoseContext& c) {
  return c.obs.source_error && c.obs.source_error->code == "nvml.lib_rm_version_mismatch";
}

std::vector<std::string> host_evidence(const HostFacts& h) {
  std::vector<std::string> ev;
  ev.push_back(fmt::format("{} NVIDIA PCI device(s) on the bus", h.nvidia_pci_devices.size()));
  for (const PciDeviceFacts& d : h.nvidia_pci_devices) {
    if (d.driver) ev.push_back(fmt::format("{} bound to driver {}", d.pci_bus_id, *d.driver));
  }
  if (h.nvidia_module_loaded)
    ev.push_back(std::string("nvidia kernel module ") +
                 (*h.nvidia_module_loaded ? "loaded" : "not loaded"));
  if (h.kernel_module_version) ev.push_back("kernel module version " + *h.kernel_module_version);
  if (h.nouveau_loaded && *h.nouveau_loaded) ev.push_back("nouveau (open-source driver) is loaded");
  if (h.dev_nvidia_nodes) ev.push_back(fmt::format("{} /dev/nvidiaN node(s)", *h.dev_nvidia_nodes));
  if (h.dev_nvidiactl && !*h.dev_nvidiactl) ev.push_back("/dev/nvidiactl is missing");
  if (h.in_container && *h.in_container) ev.push_back("running inside a container");
  return ev;
}

struct Cause {
  std::string title;
  std::string remedy;
  Severity sev = Severity::kCritical;
};

Cause no_gpu_cause(const DiagnoseContext& c) {
  const HostFacts* h = c.obs.host ? &*c.obs.host : nullptr;
  const std::string err = c.obs.source_error ? c.obs.source_error->code : "";
  const bool no_nodes = h && ((h->dev_nvidia_nodes && *h->dev_nvidia_nodes == 0) ||
                              (h->dev_nvidiactl && !*h->dev_nvidiactl));
  if (h && h->in_container.value_or(false) && no_nodes) {
    return {"This container was started without GPU access",
            "Start it with GPUs passed through: docker run --gpus all (NVIDIA Container Toolkit "
            "installed and configured: nvidia-ctk runtime configure), or request nvidia.com/gpu "
            "in the Kubernetes pod spec."};
  }
  if (h && h->nouveau_loaded.value_or(false)) {
    return {"The open-source nouveau driver holds the GPU instead of the NVIDIA driver",
            "Blacklist nouveau (echo 'blacklist nouveau' | sudo tee "
            "/etc/modprobe.d/blacklist-nouveau.conf), rebuild the initramfs (sudo update-initramfs "
            "-u or dracut -f), install the NVIDIA driver and reboot."};
  }
  // Nothing NVIDIA on the bus and no module: the machine has no GPU (or the cloud gave none).
  if (h && h->nvidia_pci_devices.empty() && !h->nvidia_module_loaded.value_or(false)) {
    return {"No NVIDIA GPU is present on the PCI bus",
            "If this machine should have GPUs: reseat the cards and their power cables, check the "
            "BIOS (Above 4G decoding, PCIe slot enabled) and the cloud instance type.",
            Severity::kWarning};
  }
  if ((h && h->nvidia_module_loaded && !*h->nvidia_module_loaded) ||
      err == "nvml.driver_not_loaded") {
    return {"The NVIDIA kernel module is not loaded",
            "Load it: sudo modprobe nvidia, then read dmesg for why it failed. Common causes: a "
            "kernel update without a DKMS rebuild (sudo dkms autoinstall), Secure Boot rejecting "
            "the unsigned module, or the GPU bound to vfio-pci for pass-through."};
  }
  if (no_nodes) {
    return {"The NVIDIA device nodes /dev/nvidia* are missing",
            "Create them: sudo nvidia-modprobe -u -c=0 (or start nvidia-persistenced), and check "
            "the udev rules and permissions on /dev/nvidia*."};
  }
  if (err == "nvml.library_not_found") {
    return {"The NVIDIA user-space library (libnvidia-ml.so.1) is not installed or not found",
            "Install the driver's user-space libraries matching the kernel module version "
            "(e.g. libnvidia-compute-<branch> / nvidia-utils-<branch>); in a container, use the "
            "NVIDIA Container Toolkit so it mounts them."};
  }
  std::string title = "No NVIDIA GPU is visible to NVML";
  if (c.obs.source_error) title += ": " + c.obs.source_error->message;
  return {title, "Run nvidia-smi to see the driver's own error, and check dmesg for NVRM lines."};
}

}  // namespace

namespace {

// "... the client has the version 515.48.07, but ... this kernel module has the version
// 510.73.05": the version after `phrase` in the driver's API-mismatch text.
std::optional<std::string> version_after(std::string_view text, std::string_view phrase) {
  const size_t at = text.find(phrase);
  if (at == std::string_view::npos) return std::nullopt;
  size_t i = at + phrase.size();
  while (i < text.size() && text[i] == ' ') ++i;
  size_t j = i;
  while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.'))
    ++j;
  while (j > i && text[j - 1] == '.') --j;
  if (j == i) return std::nullopt;
  return std::string(text.substr(i, j - i));
}

}  // namespace

void rule_driver_version_mismatch(const DiagnoseContext& c, Findings& out) {
  // The kernel's "API mismatch" line is the cause and names both versions: driver.api_mismatch
  // reports it with the NVML/container failures as its consequences, so this defers.
  if (any_driver_event(c, DriverMessageKind::kApiMismatch)) return;
  std::vector<std::string> ev;
  if (is_mismatch(c)) ev.push_back("NVML: " + c.obs.source_error->to_string());
  // The kernel's own account ("NVRM: API mismatch: the client has the version ...") names both
  // versions; it may arrive as one event or as its continuation lines.
  std::string nvrm;
  std::string where;
  for (const Event& e : c.obs.events) {
    if (e.kind != EventKind::kDriverMessage) continue;
    const bool starts = e.message.find("API mismatch") != std::string::npos;
    if (starts && where.empty()) where = e.origin;
    if (starts || (!nvrm.empty() && nvrm.size() < 1024)) nvrm += " " + e.message;
  }
  if (!nvrm.empty()) {
    const auto client = version_after(nvrm, "client has the version");
    const auto module = version_after(nvrm, "kernel module has the version");
    if (client && module)
      ev.push_back(
          fmt::format("kernel log ({}): user-space libraries {} vs loaded kernel module {}", where,
                      *client, *module));
    else
      ev.push_back(fmt::format("kernel log ({}): NVRM API mismatch", where));
  }
  for (const AppMessage& m : c.obs.app_messages) {
    if (m.kind != AppMessageKind::kNvmlVersionMismatch) continue;
    ev.push_back(fmt::format("\"{}\"{}", m.text, m.origin.empty() ? "" : " (" + m.origin + ")"));
    if (m.text.find("nvidia-container-cli") != std::string::npos ||
        m.detail.find("nvidia-container-cli") != std::string::npos)
      ev.push_back(
          "the same mismatch stops the container runtime hook: GPU containers cannot start");
    break;
  }
  if (ev.empty()) return;
  if (c.obs.host && c.obs.host->kernel_module_version)
    ev.push_back("loaded kernel module: " + *c.obs.host->kernel_module_version);
  out.push_back(make_finding("driver.version_mismatch", Severity::kCritical, nullptr,
                             "The NVIDIA driver was updated but the old kernel module is still "
                             "loaded (driver/library version mismatch)",
                             std::move(ev),
                             "Reboot, or stop every GPU process and reload the modules: sudo rmmod "
                             "nvidia_uvm nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia; "
                             "make sure the new driver's kernel module was built for the running "
                             "kernel (dkms status)."));
}

void rule_driver_no_gpu(const DiagnoseContext& c, Findings& out) {
  if (!c.gpus.empty() || is_mismatch(c)) return;
  const bool empty_snapshot = !c.obs.samples.empty();
  if (!c.obs.source_error && !empty_snapshot) return;  // e.g. a kernel log alone: nothing to say
  Cause cause = no_gpu_cause(c);
  std::vector<std::string> ev;
  if (c.obs.source_error)
    ev.push_back("GPU source: " + c.obs.source_error->to_string());
  else
    ev.push_back("the GPU source listed no GPUs");
  if (c.obs.host) {
    for (auto& line : host_evidence(*c.obs.host)) ev.push_back(std::move(line));
  }
  out.push_back(make_finding("driver.no_gpu_visible", cause.sev, nullptr, std::move(cause.title),
                             std::move(ev), std::move(cause.remedy)));
}

void rule_driver_gpus_missing(const DiagnoseContext& c, Findings& out) {
  if (!c.obs.host || c.gpus.empty()) return;
  const auto& pci = c.obs.host->nvidia_pci_devices;
  if (pci.size() <= c.gpus.size()) return;
  std::vector<std::string> ev{
      fmt::format("{} NVIDIA GPUs on the PCI bus, {} visible to NVML", pci.size(), c.gpus.size())};
  for (const PciDeviceFacts& d : pci) {
    if (c.gpu_by_pci(d.pci_bus_id)) continue;
    ev.push_back(
        fmt::format("missing: {}{}", d.pci_bus_id,
                    d.driver ? " (driver " + *d.driver + ")" : std::string(" (no driver)")));
  }
  out.push_back(make_finding("driver.gpus_missing", Severity::kCritical, nullptr,
                             "Some GPUs on the PCI bus are not visible to the NVIDIA driver",
                             std::move(ev)));
}

namespace {

struct RuntimeNeed {
  std::string what;  // "CUDA toolkit 12.4 at /usr/local/cuda-12.4"
  CudaDriverNeed need;
};

std::vector<RuntimeNeed> runtime_needs(const DiagnoseContext& c) {
  std::vector<RuntimeNeed> out;
  if (!c.obs.host) return out;
  for (const CudaInstall& t : c.obs.host->cuda_toolkits) {
    if (auto n = cuda_driver_need(t.version))
      out.push_back({fmt::format("CUDA toolkit {} at {}", t.version, t.path), *n});
  }
  for (const FrameworkRuntime& f : c.obs.host->frameworks) {
    if (!f.cuda) continue;
    if (auto n = cuda_driver_need(*f.cuda))
      out.push_back({fmt::format("{} {} built with CUDA {}", f.name, f.version, *f.cuda), *n});
  }
  return out;
}

}  // namespace

void rule_cuda_driver_too_old(const DiagnoseContext& c, Findings& out) {
  const auto drv = running_driver(c);
  if (!drv) return;
  for (const RuntimeNeed& r : runtime_needs(c)) {
    const DriverVersion floor = r.need.compat_min.value_or(r.need.toolkit_min);
    if (*drv >= floor) continue;
    std::vector<std::string> ev{
        r.need.compat_min
            ? fmt::format("{} needs driver >= {} (>= {} for the full feature set)", r.what,
                          driver_version_string(floor), driver_version_string(r.need.toolkit_min))
            : fmt::format("{} needs driver >= {}", r.what, driver_version_string(floor)),
        fmt::format("running driver {}", driver_version_string(*drv))};
    if (const auto max = driver_max_cuda(c))
      ev.push_back(fmt::format("nvidia-smi: \"CUDA Version: {}\", the newest this driver supports",
                               cuda_version_string(*max)));
    out.push_back(make_finding(
        "cuda.driver_too_old", Severity::kCritical, nullptr,
        fmt::format("Driver {} is too old for CUDA {}", driver_version_string(*drv), r.need.cuda),
        std::move(ev),
        fmt::format("Install driver {} or newer (a newer driver runs older CUDA fine), or use a "
                    "build of the framework for an older CUDA (e.g. the matching PyTorch cuXXX "
                    "wheel).",
                    driver_version_string(r.need.toolkit_min))));
  }
}

void rule_cuda_minor_compat(const DiagnoseContext& c, Findings& out) {
  const auto drv = running_driver(c);
  if (!drv) return;
  for (const RuntimeNeed& r : runtime_needs(c)) {
    if (!r.need.compat_min || *drv < *r.need.compat_min || *drv >= r.need.toolkit_min) continue;
    out.push_back(make_finding(
        "cuda.minor_compat", Severity::kInfo, nullptr,
        fmt::format("CUDA {} runs on driver {} only through minor-version compatibility",
                    r.need.cuda, driver_version_string(*drv)),
        {fmt::format("{} wants driver >= {} for the full feature set", r.what,
                     driver_version_string(r.need.toolkit_min))}));
  }
}

// The affirmative answer: every CUDA the capture names (toolkit, framework build) runs on the
// driver it shows, with the full feature set (not only through minor-version compatibility).
void rule_cuda_compatible(const DiagnoseContext& c, Findings& out) {
  const auto drv = running_driver(c);
  if (!drv) return;
  const auto needs = runtime_needs(c);
  if (needs.empty()) return;
  std::vector<std::string> ev;
  for (const RuntimeNeed& r : needs) {
    if (*drv < r.need.toolkit_min) return;  // too old or minor-compat: the other rules speak
    ev.push_back(
        fmt::format("{} needs driver >= {}", r.what, driver_version_string(r.need.toolkit_min)));
  }
  ev.push_back(fmt::format("running driver {}", driver_version_string(*drv)));
  if (const auto max = driver_max_cuda(c))
    ev.push_back(fmt::format("nvidia-smi: \"CUDA Version: {}\", the newest this driver supports",
                             cuda_version_string(*max)));
  out.push_back(make_finding("cuda.compatible", Severity::kInfo, nullptr,
                             fmt::format("Driver {} and the CUDA the capture names are compatible",
                                         driver_version_string(*drv)),
                             std::move(ev)));
}

void rule_config_persistence_off(const DiagnoseContext& c, Findings& out) {
  std::vector<const GpuSeries*> off;
  for (const GpuSeries& g : c.gpus) {
    if (!g.samples.empty() && g.last()->persistence_mode == false) off.push_back(&g);
  }
  if (off.empty()) return;
  std::string list;
  for (const GpuSeries* g : off) list += (list.empty() ? "" : ", ") + std::to_string(g->index);
  out.push_back(make_finding(
      "config.persistence_off", Severity::kInfo, off.size() == 1 ? off[0] : nullptr,
      fmt::format("Persistence mode is off on {} of {} GPUs", off.size(), c.gpus.size()),
      {"GPUs with persistence off: " + list,
       "each CUDA start then re-initialises the GPU (seconds of delay) and settings reset"}));
}

void rule_config_app_clocks_lowered(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty()) continue;
    const auto app = g.last()->app_graphics_clock_mhz;
    const auto def = g.info->default_app_graphics_clock_mhz;
    if (!app || !def || *app >= *def) continue;
    out.push_back(
        make_finding("config.app_clocks_lowered", Severity::kWarning, &g,
                     fmt::format("{} application clocks are set below default", gpu_label(g)),
                     {fmt::format("application graphics clock {} MHz, default {} MHz", *app, *def)},
                     fmt::format("Reset them: sudo nvidia-smi -i {} -rac", g.index)));
  }
}

void rule_config_mig_enabled(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty() || !g.last()->mig_enabled.value_or(false)) continue;
    out.push_back(
        make_finding("config.mig_enabled", Severity::kInfo, &g,
                     fmt::format("{} is partitioned with MIG", gpu_label(g)),
                     {"device-level utilization reads N/A under MIG: it is unknown, not 0%"}));
  }
}

void rule_config_compute_mode(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.samples.empty() || !g.last()->compute_mode) continue;
    const ComputeMode m = *g.last()->compute_mode;
    if (m == ComputeMode::kDefault) continue;
    const bool prohibited = m == ComputeMode::kProhibited;
    out.push_back(
        make_finding("config.compute_mode", prohibited ? Severity::kWarning : Severity::kInfo, &g,
                     fmt::format("{} compute mode is {}", gpu_label(g),
                                 prohibited ? "Prohibited: no CUDA program can use it"
                                            : "exclusive: one process at a time"),
                     {fmt::format("compute mode {}", prohibited ? "PROHIBITED"
                                                     : m == ComputeMode::kExclusiveThread
                                                         ? "EXCLUSIVE_THREAD"
                                                         : "EXCLUSIVE_PROCESS")},
                     fmt::format("If unintended: sudo nvidia-smi -i {} -c DEFAULT", g.index)));
  }
}

}  // namespace gw
