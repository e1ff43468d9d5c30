// collect_env / nvcc -V / /proc/driver/nvidia/version / nvidia-smi banner lines -> HostFacts.
#include "sources/env/env_reports.h"

#include <algorithm>
#include <array>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

using text::is_digit;

// First "N.N[.N...]" token of s at or after `from` ("Module  535.129.03  Tue" -> "535.129.03").
std::optional<std::string> version_token(std::string_view s, size_t from = 0) {
  for (size_t i = from; i < s.size(); ++i) {
    if (!is_digit(s[i]) || (i > 0 && (is_digit(s[i - 1]) || s[i - 1] == '.'))) continue;
    size_t e = i;
    while (e < s.size() && (is_digit(s[e]) || s[e] == '.')) ++e;
    while (e > i && s[e - 1] == '.') --e;
    const std::string_view tok = s.substr(i, e - i);
    if (tok.find('.') != std::string_view::npos) return std::string(tok);
    i = e;
  }
  return std::nullopt;
}

// "12.1.105" -> "12.1" (CUDA is named by major.minor everywhere the rules look).
std::string major_minor(std::string_view v) {
  const size_t a = v.find('.');
  if (a == std::string_view::npos) return std::string(v);
  const size_t b = v.find('.', a + 1);
  return std::string(v.substr(0, b));
}

bool could_not_collect(std::string_view v) {
  return v.empty() || text::iequals(v, "Could not collect") || text::iequals(v, "N/A") ||
         text::iequals(v, "None") || text::starts_with(v, "No CUDA");
}

// A report printed again (a log that prints its environment at every start) adds nothing new,
// and the lists stay bounded whatever the input holds (issue 20).
constexpr size_t kMaxFacts = 64;
template <class T>
void add_fact(std::vector<T>& v, T x) {
  if (v.size() < kMaxFacts && std::find(v.begin(), v.end(), x) == v.end())
    v.push_back(std::move(x));
}
// GPU names are listed one per GPU, equal names included.
void add_model(HostFacts& f, std::string_view name) {
  if (f.gpu_models.size() < kMaxFacts) f.gpu_models.emplace_back(name);
}

FrameworkRuntime& torch(HostFacts& f, const std::string& origin) {
  for (auto& fw : f.frameworks)
    if (fw.name == "torch") return fw;
  f.frameworks.push_back({"torch", "", std::nullopt, origin});
  return f.frameworks.back();
}

// Keys of collect_env's report (PyTorch 1.x and 2.x layouts).
constexpr std::array<std::string_view, 24> kCollectEnvKeys = {
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "OS",
    "GCC version",
    "Clang version",
    "CMake version",
    "Libc version",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    "CPU",
    "Versions of relevant libraries",
    "XPU used to build PyTorch",
    "Is XPU available",
};

bool is_collect_env_key(std::string_view k) {
  for (std::string_view x : kCollectEnvKeys)
    if (k == x) return true;
  return false;
}

}  // namespace

std::optional<SmiBanner> parse_smi_banner_line(std::string_view line) {
  std::string_view s = text::trim(line);
  if (!s.empty() && s.front() == '|') s.remove_prefix(1);
  if (!s.empty() && s.back() == '|') s.remove_suffix(1);
  s = text::trim(s);
  SmiBanner b;
  if (text::starts_with(s, "NVIDIA-SMI ")) {
    b.smi_version = version_token(s, 11);
    if (const size_t p = s.find("Driver Version:"); p != std::string_view::npos)
      b.driver_version = version_token(s, p + 15);
    if (const size_t p = s.find("CUDA Version:"); p != std::string_view::npos)
      b.cuda_version = version_token(s, p + 13);
    if (!b.driver_version && !b.smi_version) return std::nullopt;
    return b;
  }
  // nvidia-smi --version (R535+): "DRIVER version      : 535.129.03", "CUDA Version : 12.2".
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view key = text::trim(s.substr(0, colon));
  const auto v = version_token(s, colon + 1);
  if (!v) return std::nullopt;
  if (key == "NVIDIA-SMI version")
    b.smi_version = v;
  else if (key == "DRIVER version")
    b.driver_version = v;
  else if (key == "CUDA Version" || key == "CUDA version")
    b.cuda_version = v;
  else if (key != "NVML version")
    return std::nullopt;
  return b;
}

void EnvReader::saw(const char* what) {
  const std::string s = origin_ + ": " + what;
  for (const auto& x : seen_)
    if (x == s) return;
  seen_.push_back(s);
}

bool EnvReader::take_collect_env(std::string_view key, std::string_view val, HostFacts& f) {
  in_gpu_list_ = key == "GPU models and configuration";
  in_cpu_block_ = key == "CPU";
  if (key == "Versions of relevant libraries") in_cpu_block_ = false;
  if (key == "PyTorch version" && !could_not_collect(val)) {
    FrameworkRuntime& t = torch(f, origin_);
    t.version = std::string(val);
    // "2.3.1+cu121": the wheel's CUDA when "CUDA used to build" is missing.
    if (const size_t p = val.find("+cu"); p != std::string_view::npos && !t.cuda) {
      const std::string_view d = val.substr(p + 3);
      if (d.size() >= 3)
        t.cuda = std::string(d.substr(0, d.size() - 1)) + "." + std::string(1, d.back());
    }
  } else if (key == "CUDA used to build PyTorch" && !could_not_collect(val)) {
    torch(f, origin_).cuda = major_minor(val);
  } else if (key == "Is CUDA available") {
    if (auto b = text::parse_bool(val))
      f.torch_cuda_available = b;
    else if (val == "True" || val == "False")
      f.torch_cuda_available = val == "True";
  } else if (key == "CUDA runtime version" && !could_not_collect(val)) {
    if (auto v = version_token(val))
      add_fact(f.cuda_toolkits, CudaInstall{origin_ + " (collect_env)", major_minor(*v)});
  } else if (key == "Nvidia driver version" && !could_not_collect(val)) {
    if (auto v = version_token(val)) f.smi_driver_version = v;
  } else if (key == "GPU models and configuration" && !could_not_collect(val)) {
    // One GPU may be on the key's own line: "GPU models and configuration: GPU 0: A100".
    add_model(f, val);
  }
  return true;
}

// TensorFlow's issue template, "System information" ("- TensorFlow version (use command
// below): 2.4.1", "- CUDA/cuDNN version: 10.1", "- GPU model and memory: A100"): a list item
// whose key is one of the template's.
constexpr std::array<std::string_view, 11> kTfTemplateKeys = {"Have I written custom code",
                                                              "OS Platform and Distribution",
                                                              "Mobile device",
                                                              "TensorFlow installed from",
                                                              "TensorFlow version",
                                                              "Python version",
                                                              "Bazel version",
                                                              "GCC/Compiler version",
                                                              "CUDA/cuDNN version",
                                                              "GPU model and memory",
                                                              "Exact command to reproduce"};

bool EnvReader::take_issue_template(std::string_view s, HostFacts& f) {
  if (!text::starts_with(s, "- ") && !text::starts_with(s, "* ")) return false;
  s = text::trim(s.substr(2));
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view key = s.substr(0, colon), val = text::trim(s.substr(colon + 1));
  const auto known = std::find_if(kTfTemplateKeys.begin(), kTfTemplateKeys.end(),
                                  [&](std::string_view k) { return text::starts_with(key, k); });
  if (known == kTfTemplateKeys.end()) return take_env_list_item(key, val, f);
  saw("TensorFlow issue template");
  if (*known == "TensorFlow version") {
    if (auto v = version_token(val))
      add_fact(f.frameworks, FrameworkRuntime{"tensorflow", *v, std::nullopt, origin_});
  } else if (*known == "CUDA/cuDNN version") {
    if (auto v = version_token(val))
      add_fact(f.cuda_toolkits, CudaInstall{origin_ + " (issue template)", major_minor(*v)});
  } else if (*known == "GPU model and memory" && !val.empty()) {
    add_model(f, val);
  }
  return true;
}

// A free-form environment list of an issue ("- CUDA toolkit: 12.4 (driver 570.124.06 from
// NVIDIA)", "- GPU: 2x RTX 5090 (32 GB each)", "- NVIDIA driver: 550.54.15"): the item is read
// when its key is one of these words exactly and its value carries what the key promises.
bool EnvReader::take_env_list_item(std::string_view key, std::string_view val, HostFacts& f) {
  const auto is = [&](std::initializer_list<std::string_view> keys) {
    return std::any_of(keys.begin(), keys.end(),
                       [&](std::string_view k) { return text::iequals(key, k); });
  };
  const auto driver_in = [&](std::string_view v) -> std::optional<std::string> {
    const std::string low = text::ascii_lower(v);
    const size_t d = low.find("driver");
    return d == std::string::npos ? std::nullopt : version_token(v, d);
  };
  if (is({"CUDA", "CUDA toolkit", "CUDA version", "CUDA toolkit version"})) {
    const auto v = version_token(val);
    if (!v) return false;
    // The toolkit's own version comes first; a driver named in the same item is the driver's.
    const auto drv = driver_in(val);
    if (!drv || val.find(*v) < text::ascii_lower(val).find("driver"))
      add_fact(f.cuda_toolkits, CudaInstall{origin_ + " (environment list)", major_minor(*v)});
    if (drv) f.smi_driver_version = drv;
  } else if (is({"Driver", "Driver version", "NVIDIA driver", "NVIDIA driver version", "GPU driver",
                 "Nvidia driver"})) {
    const auto v = version_token(val);
    if (!v) return false;
    f.smi_driver_version = v;
  } else if (is({"GPU", "GPUs", "GPU model", "GPU models", "Graphics card"})) {
    if (val.empty()) return false;
    add_model(f, val);
  } else {
    return false;
  }
  saw("environment list");
  return true;
}

// The CUDA sample deviceQuery: "Detected 1 CUDA Capable device(s)", then per device
// `Device 0: "NVIDIA GeForce GT 720"` and its "Label:   value" lines (capability, memory,
// clocks, limits). The device name is kept; the other labels are read as the report's.
constexpr std::array<std::string_view, 16> kDeviceQueryLabels = {
    "CUDA Driver Version / Runtime Version",
    "CUDA Capability Major/Minor version number",
    "Total amount of",
    "Multiprocessors",
    "GPU Max Clock rate",
    "Memory Clock rate",
    "Memory Bus Width",
    "L2 Cache Size",
    "Maximum",
    "Max dimension size",
    "Warp size",
    "Texture alignment",
    "Concurrent copy",
    "Run time limit",
    "Device ",
    "Support"};

bool EnvReader::take_device_query(std::string_view s, HostFacts& f) {
  if (text::starts_with(s, "Detected ") &&
      s.find(" CUDA Capable device") != std::string_view::npos) {
    in_device_query_ = true;
    saw("deviceQuery");
    return true;
  }
  if (!in_device_query_) return false;
  if (text::starts_with(s, "Device ") && s.find(": \"") != std::string_view::npos) {
    const size_t q = s.find('"');
    const size_t e = s.rfind('"');
    if (e > q + 1) add_model(f, s.substr(q + 1, e - q - 1));
    return true;
  }
  for (std::string_view label : kDeviceQueryLabels)
    if (text::starts_with(s, label)) return true;
  return text::starts_with(s, "(") || text::starts_with(s, "Integrated GPU") ||
         text::starts_with(s, "Alignment requirement") || text::starts_with(s, "Compute Mode") ||
         text::starts_with(s, "< ") || text::starts_with(s, "deviceQuery, CUDA Driver");
}

// ggml's (llama.cpp, ollama) device list at start, anywhere in a line (a journal or a server
// log prefixes it): "ggml_cuda_init: found 2 CUDA devices:" then "  Device 0: NVIDIA GeForce
// RTX 4090, compute capability 8.9, VMM: yes" per GPU.
bool EnvReader::take_ggml_devices(std::string_view s, HostFacts& f) {
  if (!in_ggml_ && s.find("ggml_") == std::string_view::npos) return false;  // one scan a line
  for (std::string_view head : {"ggml_cuda_init: found ", "ggml_init_cublas: found "})
    if (const size_t p = s.find(head);
        p != std::string_view::npos && s.find(" CUDA devices", p) != std::string_view::npos) {
      in_ggml_ = true;
      saw("ggml CUDA device list");
      return true;
    }
  if (!in_ggml_) return false;
  const size_t d = s.find("Device ");
  const size_t cc = s.find(", compute capability ");
  size_t used = 0;
  if (d != std::string_view::npos && cc != std::string_view::npos && cc > d) {
    text::leading_digits(s.substr(d + 7), used);
    const size_t colon = d + 7 + used;
    if (used > 0 && s.substr(colon, 2) == ": " && colon + 2 < cc) {
      add_model(f, text::trim(s.substr(colon + 2, cc - colon - 2)));
      return true;
    }
  }
  in_ggml_ = false;
  return false;
}

bool EnvReader::take(std::string_view line, HostFacts& f) {
  const std::string_view s = text::trim(line);
  if (s.empty()) return false;
  return take_issue_template(s, f) || take_device_query(s, f) || take_ggml_devices(s, f) ||
         take_nvbandwidth(s, f) || take_driver_tools(s, f) || take_device_count(s, f) ||
         take_numba_detect(s, f) || take_collect_env_line(s, f);
}

// numba's cuda.detect(): "Found 1 CUDA devices", a line per supported device ("id 0
// b'Quadro T1000'  [SUPPORTED]") with its properties indented below ("Compute Capability: 7.5",
// "UUID: GPU-...", "Watchdog: Enabled"), then "Summary:" and "1/1 devices are supported". A
// device numba does not support ("[NOT SUPPORTED: CC 3.0 < 3.5]") is left unread.
bool EnvReader::take_numba_detect(std::string_view s, HostFacts& f) {
  if (text::starts_with(s, "Found ") && text::ends_with(s, " CUDA devices")) {
    const auto n = text::parse_u64(text::trim(s.substr(6, s.size() - 6 - 13)));
    if (!n) return false;
    in_numba_ = true;
    f.cuda_device_count = static_cast<unsigned>(*n);
    saw("numba cuda.detect()");
    return true;
  }
  if (!in_numba_) return false;
  if (text::starts_with(s, "id ") && text::ends_with(s, "[SUPPORTED]")) {
    const size_t q = s.find("b'");
    const size_t e = q == std::string_view::npos ? q : s.find('\'', q + 2);
    if (e == std::string_view::npos) return false;
    add_model(f, s.substr(q + 2, e - q - 2));
    return true;
  }
  static constexpr std::array<std::string_view, 7> kKeys = {
      "Compute Capability:",          "PCI Device ID:", "PCI Bus ID:", "UUID:", "Watchdog:",
      "FP32/FP64 Performance Ratio:", "Summary:"};
  for (std::string_view k : kKeys)
    if (text::starts_with(s, k)) return true;
  if (text::ends_with(s, " devices are supported")) {
    in_numba_ = false;
    return true;
  }
  return false;
}

// What a program printed as the number of GPUs CUDA shows it: "CUDA device count: 1",
// "torch.cuda.device_count(): 2", "Number of GPUs: 8" (key, ':' or '=', the number alone); and
// the directives of a Slurm batch script the job ran from.
bool EnvReader::take_device_count(std::string_view s, HostFacts& f) {
  // A Slurm batch script's directives ("#SBATCH --gres=gpu:8"): the job's request, read.
  if (text::starts_with(s, "#SBATCH --")) {
    saw("a Slurm batch script");
    return true;
  }
  if (s.size() > 48) return false;
  const size_t sep = s.find_first_of(":=");
  if (sep == std::string_view::npos) return false;
  static constexpr std::array<std::string_view, 8> kKeys = {
      "cuda device count", "torch.cuda.device_count()",
      "number of gpus",    "number of cuda devices",
      "cuda devices",      "gpu count",
      "num gpus",          "device_count()"};
  const std::string key = text::ascii_lower(text::trim(s.substr(0, sep)));
  if (std::find(kKeys.begin(), kKeys.end(), key) == kKeys.end()) return false;
  const auto n = text::parse_u64(text::trim(s.substr(sep + 1)));
  if (!n || *n > 4096) return false;
  f.cuda_device_count = static_cast<unsigned>(*n);
  saw("a program's CUDA device count");
  return true;
}

// nvbandwidth's header: its version, the CUDA runtime and driver it ran with (as integers),
// the driver, and one "Device N: name (bus)" line per GPU; its notes are its own prose.
bool EnvReader::take_nvbandwidth(std::string_view s, HostFacts& f) {
  if (text::starts_with(s, "nvbandwidth Version:")) {
    in_nvbandwidth_ = true;
    saw("nvbandwidth");
    return true;
  }
  if (!in_nvbandwidth_) return false;
  if (text::starts_with(s, "Built from Git version:") || text::starts_with(s, "NOTE: ") ||
      text::starts_with(s, "Additional system-specific tuning") ||
      text::starts_with(s, "Performance can vary with"))
    return true;
  if (text::starts_with(s, "CUDA Runtime Version:")) {
    if (auto v = text::cuda_int_version(s.substr(21)))
      add_fact(f.cuda_toolkits, CudaInstall{origin_ + " (nvbandwidth)", *v});
    return true;
  }
  if (text::starts_with(s, "CUDA Driver Version:")) {
    if (auto v = text::cuda_int_version(s.substr(20))) f.smi_cuda_version = v;
    return true;
  }
  if (text::starts_with(s, "Driver Version:")) {
    if (auto v = version_token(s, 15)) f.smi_driver_version = v;
    return true;
  }
  // "Device 0: NVIDIA RTX A6000 (00000000:01:00)".
  if (text::starts_with(s, "Device ") && s.find(": ") != std::string_view::npos &&
      s.back() == ')') {
    const size_t colon = s.find(": ");
    const size_t paren = s.rfind(" (");
    if (paren != std::string_view::npos && paren > colon)
      add_model(f, s.substr(colon + 2, paren - colon - 2));
    return true;
  }
  return false;
}

// /proc/driver/nvidia/version, nvcc -V, the nvidia-smi banner and nvidia-smi -L.
bool EnvReader::take_driver_tools(std::string_view s, HostFacts& f) {
  // /proc/driver/nvidia/version.
  if (text::starts_with(s, "NVRM version:")) {
    const size_t m = s.find("Module");
    if (auto v = version_token(s, m == std::string_view::npos ? 13 : m))
      f.kernel_module_version = v;
    saw("/proc/driver/nvidia/version");
    return true;
  }
  if (text::starts_with(s, "GCC version:") && !in_collect_env_) {
    saw("/proc/driver/nvidia/version");
    return true;
  }
  // nvcc -V.
  if (text::starts_with(s, "nvcc: NVIDIA (R) Cuda compiler")) {
    in_nvcc_ = true;
    saw("nvcc -V");
    return true;
  }
  if (text::starts_with(s, "Cuda compilation tools, release ")) {
    if (auto v = version_token(s, 31))
      add_fact(f.cuda_toolkits, CudaInstall{origin_ + " (nvcc -V)", major_minor(*v)});
    saw("nvcc -V");
    in_nvcc_ = false;
    return true;
  }
  if (in_nvcc_ && (text::starts_with(s, "Copyright (c)") || text::starts_with(s, "Built on ")))
    return true;
  if (text::starts_with(s, "Build cuda_")) return true;
  // nvidia-smi banner / --version.
  if (auto b = parse_smi_banner_line(s)) {
    if (b->driver_version) f.smi_driver_version = b->driver_version;
    if (b->cuda_version) f.smi_cuda_version = b->cuda_version;
    saw("nvidia-smi banner");
    return true;
  }
  // nvidia-smi -L: "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)", "  MIG 1g.10gb Device 0: ...".
  if (const size_t paren = text::uuid_suffix(s);
      paren != std::string_view::npos && text::starts_with(s, "GPU ")) {
    const size_t colon = s.find(": ");
    if (colon != std::string_view::npos && paren > colon)
      add_model(f, text::trim(s.substr(colon + 2, paren - colon - 2)));
    saw("nvidia-smi -L");
    return true;
  }
  return text::starts_with(s, "MIG ") && s.find("(UUID: MIG-") != std::string_view::npos;
}

// python -m torch.utils.collect_env: its keys, GPU list, pip/conda lines and lscpu block.
bool EnvReader::take_collect_env_line(std::string_view s, HostFacts& f) {
  if (s == "Collecting environment information...") {
    in_collect_env_ = true;
    saw("python -m torch.utils.collect_env");
    return true;
  }
  const size_t colon = s.find(':');
  if (colon != std::string_view::npos) {
    const std::string_view key = text::trim(s.substr(0, colon));
    const std::string_view val = text::trim(s.substr(colon + 1));
    if (is_collect_env_key(key) &&
        (in_collect_env_ || key == "PyTorch version" || key == "CUDA used to build PyTorch" ||
         key == "Is CUDA available" || key == "Nvidia driver version")) {
      in_collect_env_ = true;
      saw("python -m torch.utils.collect_env");
      return take_collect_env(key, val, f);
    }
  }
  if (!in_collect_env_) return false;
  if (in_gpu_list_ && text::starts_with(s, "GPU ") && colon != std::string_view::npos) {
    add_model(f, text::trim(s.substr(colon + 1)));
    return true;
  }
  if (text::starts_with(s, "[pip") || text::starts_with(s, "[conda]")) {
    if (const size_t p = s.find("torch=="); p != std::string_view::npos) {
      FrameworkRuntime& t = torch(f, origin_);
      if (t.version.empty()) t.version = std::string(text::trim(s.substr(p + 7)));
    }
    return true;
  }
  if (s.front() == '/' || text::starts_with(s, "Probably one of the following")) return true;
  // lscpu's "Key:   value" lines under "CPU:".
  if (in_cpu_block_ && colon != std::string_view::npos && colon < 40) return true;
  return false;
}

}  // namespace gw
