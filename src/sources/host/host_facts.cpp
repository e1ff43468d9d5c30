#include "sources/host/host_facts.h"

#include <algorithm>
#include <set>

#include "core/event.h"
#include "sources/host/host_io.h"
#include "sources/host/host_parse.h"
#include "sources/host/host_sampler.h"

namespace gw {
namespace {

namespace fs = std::filesystem;
using host::RootedFs;

constexpr uint32_t kNvidiaVendor = 0x10de;
constexpr uint32_t kDisplayClass = 0x03;  // PCI base class: display controller (VGA, 3D)

void read_driver(const RootedFs& fs, HostFacts& h, std::vector<Error>* errors) {
  if (auto text = fs.read("/proc/driver/nvidia/version", errors)) {
    h.kernel_module_version = host::parse_nvidia_driver_version(*text);
  }
  if (auto text = fs.read("/proc/modules", errors)) {
    const auto m = host::parse_proc_modules(*text);
    h.nvidia_module_loaded = m.nvidia;
    h.nouveau_loaded = m.nouveau;
  }
  if (fs.is_dir("/dev")) {
    unsigned nodes = 0;
    for (const auto& name : fs.list("/dev")) {
      const std::string_view n = name;
      if (n.size() > 6 && n.substr(0, 6) == "nvidia" &&
          n.find_first_not_of("0123456789", 6) == std::string_view::npos) {
        ++nodes;
      }
    }
    h.dev_nvidia_nodes = nodes;
    h.dev_nvidiactl = fs.exists("/dev/nvidiactl");
  }
}

void read_container(const RootedFs& fs, const HostReadOptions& o, HostFacts& h,
                    std::vector<Error>* errors) {
  if (fs.exists("/.dockerenv") || fs.exists("/run/.containerenv") || o.env.count("container")) {
    h.in_container = true;
    return;
  }
  if (auto text = fs.read("/proc/1/cgroup", errors)) {
    h.in_container = host::cgroup_says_container(*text);
  }
}

std::optional<double> read_double(const RootedFs& fs, const fs::path& p,
                                  std::optional<double> (*parse)(std::string_view),
                                  std::vector<Error>* errors) {
  auto text = fs.read(p, errors);
  return text ? parse(*text) : std::nullopt;
}

std::optional<int64_t> read_int(const RootedFs& fs, const fs::path& p, std::vector<Error>* errors) {
  auto text = fs.read(p, errors);
  return text ? host::parse_int(*text) : std::nullopt;
}

std::optional<unsigned> to_width(std::optional<int64_t> v) {
  if (!v || *v <= 0 || *v > 64) return std::nullopt;
  return static_cast<unsigned>(*v);
}

std::optional<PciDeviceFacts> read_pci_device(const RootedFs& fs, const std::string& entry,
                                              std::vector<Error>* errors) {
  const fs::path dir = fs::path("/sys/bus/pci/devices") / entry;
  const auto vendor_text = fs.read(dir / "vendor", errors);
  const auto class_text = fs.read(dir / "class", errors);
  if (!vendor_text || !class_text) return std::nullopt;
  const auto vendor = host::parse_hex(*vendor_text);
  const auto cls = host::parse_hex(*class_text);
  if (vendor != kNvidiaVendor || !cls || (*cls >> 16) != kDisplayClass) return std::nullopt;

  PciDeviceFacts d;
  d.pci_bus_id = normalize_pci_bus_id(entry).value_or(entry);
  if (auto id = fs.read(dir / "device", errors); id && host::parse_hex(*id)) {
    d.device_id = std::string(id->substr(0, id->find_first_of(" \t\r\n")));
  }
  d.link_speed_gt_s =
      read_double(fs, dir / "current_link_speed", host::parse_link_speed_gt_s, errors);
  d.max_link_speed_gt_s =
      read_double(fs, dir / "max_link_speed", host::parse_link_speed_gt_s, errors);
  d.link_width = to_width(read_int(fs, dir / "current_link_width", errors));
  d.max_link_width = to_width(read_int(fs, dir / "max_link_width", errors));
  // -1 means the platform gave no NUMA affinity: unknown, not node -1.
  if (auto numa = read_int(fs, dir / "numa_node", errors); numa && *numa >= 0) {
    d.numa_node = static_cast<int>(*numa);
  }
  d.driver = fs.link_name(dir / "driver");
  return d;
}

void read_pci(const RootedFs& fs, HostFacts& h, std::vector<Error>* errors) {
  for (const auto& entry : fs.list("/sys/bus/pci/devices")) {
    if (auto d = read_pci_device(fs, entry, errors)) h.nvidia_pci_devices.push_back(std::move(*d));
  }
}

void read_load(const RootedFs& fs, HostFacts& h, std::vector<Error>* errors) {
  h.load1 = read_double(fs, "/proc/loadavg", host::parse_loadavg1, errors);
  h.psi_cpu_some_avg10 = read_double(fs, "/proc/pressure/cpu", host::parse_psi_some_avg10, errors);
  h.psi_io_some_avg10 = read_double(fs, "/proc/pressure/io", host::parse_psi_some_avg10, errors);
  h.psi_mem_some_avg10 =
      read_double(fs, "/proc/pressure/memory", host::parse_psi_some_avg10, errors);
}

void read_cuda_toolkits(const RootedFs& fs, HostFacts& h, std::vector<Error>* errors) {
  for (const auto& name : fs.list("/usr/local")) {
    if (name.rfind("cuda", 0) != 0) continue;
    const fs::path dir = fs::path("/usr/local") / name;
    if (!fs.is_dir(dir)) continue;
    std::optional<std::string> version;
    if (auto json = fs.read(dir / "version.json", errors)) {
      version = host::parse_cuda_version_json(*json);
    }
    if (!version) {
      if (auto txt = fs.read(dir / "version.txt", errors)) {
        version = host::parse_cuda_version_txt(*txt);
      }
    }
    if (version) h.cuda_toolkits.push_back(CudaInstall{dir.string(), *version});
  }
}

// site-packages folders to look in: the caller's, then the usual system and conda ones.
std::vector<fs::path> python_dirs(const RootedFs& fs, const HostReadOptions& o) {
  std::vector<fs::path> dirs(o.python_paths.begin(), o.python_paths.end());
  for (const char* base : {"/usr/lib", "/usr/local/lib", "/opt/conda/lib"}) {
    for (const auto& name : fs.list(base)) {
      if (name.rfind("python3", 0) != 0) continue;
      for (const char* leaf : {"site-packages", "dist-packages"}) {
        const fs::path d = fs::path(base) / name / leaf;
        if (fs.is_dir(d)) dirs.push_back(d);
      }
    }
  }
  std::set<fs::path> seen;
  std::vector<fs::path> unique;
  for (auto& d : dirs) {
    if (seen.insert(d.lexically_normal()).second) unique.push_back(d);
  }
  return unique;
}

void read_tensorflow(const RootedFs& fs, const fs::path& site, HostFacts& h,
                     std::vector<Error>* errors) {
  if (!fs.is_dir(site / "tensorflow")) return;
  for (const auto& name : fs.list(site)) {
    const auto dist = host::parse_dist_info_name(name);
    if (!dist || dist->first.rfind("tensorflow", 0) != 0) continue;
    FrameworkRuntime fw{"tensorflow", dist->second, std::nullopt, (site / "tensorflow").string()};
    if (auto info = fs.read(site / "tensorflow/python/platform/build_info.py", errors)) {
      fw.cuda = host::parse_tf_build_info_cuda(*info);
    }
    h.frameworks.push_back(std::move(fw));
    return;
  }
}

void read_frameworks(const RootedFs& fs, const HostReadOptions& o, HostFacts& h,
                     std::vector<Error>* errors) {
  for (const auto& site : python_dirs(fs, o)) {
    if (auto text = fs.read(site / "torch/version.py", errors)) {
      if (auto tv = host::parse_torch_version_py(*text)) {
        h.frameworks.push_back(
            FrameworkRuntime{"torch", tv->version, tv->cuda, (site / "torch").string()});
      } else if (errors != nullptr) {
        errors->push_back(make_error("host.bad_file", "no __version__ in torch/version.py",
                                     fs.real(site / "torch/version.py").string()));
      }
    }
    read_tensorflow(fs, site, h, errors);
  }
}

}  // namespace

HostFacts read_host_static_facts(const HostReadOptions& options, std::vector<Error>* errors) {
  const RootedFs fs(options.root);
  HostFacts h;
  read_driver(fs, h, errors);
  read_container(fs, options, h, errors);
  read_pci(fs, h, errors);
  read_load(fs, h, errors);
  read_cuda_toolkits(fs, h, errors);
  read_frameworks(fs, options, h, errors);
  h.env = host::select_gpu_env(options.env);
  return h;
}

HostFacts read_host_facts(const HostReadOptions& options, std::vector<Error>* errors) {
  HostFacts h = read_host_static_facts(options, errors);
  apply_host_rates_since_start(read_host_counters(options, errors), h);
  return h;
}

}  // namespace gw
