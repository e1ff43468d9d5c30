// Environment reports in captured text -> HostFacts: `python -m torch.utils.collect_env`,
// `nvcc -V`, /proc/driver/nvidia/version, the nvidia-smi banner line, and `lspci -vv` link
// status. They let the driver-vs-CUDA and PCIe rules judge a capture as they judge a live host.
// Pure functions over text, one line at a time (EnvReader) or one block (parse_lspci).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host.h"

namespace gw {

// "| NVIDIA-SMI 418.67       Driver Version: 418.67       CUDA Version: 10.1     |" (with or
// without the box) -> driver and CUDA versions. nullopt when the line is not the banner.
struct SmiBanner {
  std::optional<std::string> smi_version, driver_version, cuda_version;
};
std::optional<SmiBanner> parse_smi_banner_line(std::string_view line);

// Reads report lines one by one; take() is true when the line belongs to one of the reports.
class EnvReader {
 public:
  explicit EnvReader(std::string origin) : origin_(std::move(origin)) {}
  bool take(std::string_view line, HostFacts& facts);
  bool saw_any() const { return !seen_.empty(); }
  const std::vector<std::string>& reports() const { return seen_; }

 private:
  bool take_collect_env(std::string_view key, std::string_view val, HostFacts& facts);
  bool take_issue_template(std::string_view s, HostFacts& facts);
  bool take_env_list_item(std::string_view key, std::string_view val, HostFacts& facts);
  bool take_device_query(std::string_view s, HostFacts& facts);
  bool take_ggml_devices(std::string_view s, HostFacts& facts);
  bool take_driver_tools(std::string_view s, HostFacts& facts);
  bool take_device_count(std::string_view s, HostFacts& facts);
  bool take_numba_detect(std::string_view s, HostFacts& facts);
  bool take_nvbandwidth(std::string_view s, HostFacts& facts);
  bool take_collect_env_line(std::string_view s, HostFacts& facts);
  void saw(const char* what);

  std::string origin_;
  std::vector<std::string> seen_;
  bool in_collect_env_ = false;
  bool in_gpu_list_ = false;
  bool in_cpu_block_ = false;
  bool in_nvcc_ = false;
  bool in_nvbandwidth_ = false;   // after nvbandwidth's "nvbandwidth Version:" banner
  bool in_device_query_ = false;  // after deviceQuery's "Detected N CUDA Capable device(s)"
  bool in_ggml_ = false;          // after ggml's "ggml_cuda_init: found N CUDA devices:"
  bool in_numba_ = false;         // after numba's cuda.detect() "Found N CUDA devices"
};

// One `lspci -vv` block (a device line and its indented details). Only NVIDIA display/3D
// devices are returned; other devices are still read (returns true) but give no facts.
bool looks_like_lspci_device_line(std::string_view line);
// "# lspci -vvv -s 0000:01:00.0 (GPU function)", "$ sudo lspci -vv -s 01:00.0": a typed or
// scripted lspci for one device, whose output (its indented lines) may follow without the
// device's own line. The normalised address, else nullopt.
std::optional<std::string> lspci_selected_device(std::string_view line);
std::vector<PciDeviceFacts> parse_lspci(std::string_view text);

// "16GT/s" -> 16.0; "2.5GT/s" -> 2.5.
std::optional<double> parse_gt_s(std::string_view v);

}  // namespace gw
