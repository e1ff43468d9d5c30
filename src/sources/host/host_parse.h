// Pure parsers for the /proc and /sys files host facts come from: text in, values out. The
// reader (host_facts.cpp) does the file I/O. Each returns std::nullopt when the text does not
// hold what it should.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host.h"

namespace gw::host {

// /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  ..."
// (also the "Open Kernel Module for x86_64" wording) -> "550.54.15".
std::optional<std::string> parse_nvidia_driver_version(std::string_view text);

struct LoadedModules {
  bool nvidia = false;  // the "nvidia" module itself (not only nvidia_uvm etc.)
  bool nouveau = false;
};
// /proc/modules: one module per line, name first.
LoadedModules parse_proc_modules(std::string_view text);

// /proc/1/cgroup: true when a line names a container runtime (docker, kubepods, containerd,
// lxc, libpod, crio). cgroup v2 inside a namespace shows "0::/", which proves nothing: false.
bool cgroup_says_container(std::string_view text);

// sysfs link speed "16.0 GT/s PCIe" / "8 GT/s" / "2.5 GT/s PCIe" -> GT/s; "Unknown" -> nullopt.
std::optional<double> parse_link_speed_gt_s(std::string_view text);
// "0x10de\n" -> 0x10de.
std::optional<uint32_t> parse_hex(std::string_view text);
// "16\n" -> 16. Whitespace around is ignored; anything else is nullopt.
std::optional<int64_t> parse_int(std::string_view text);

// /proc/loadavg -> 1-minute load.
std::optional<double> parse_loadavg1(std::string_view text);

// The aggregate "cpu" line of /proc/stat, in USER_HZ ticks.
struct CpuTimes {
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  uint64_t total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};
struct ProcStat {
  CpuTimes cpu;
  unsigned cpu_count = 0;  // "cpuN" lines
};
std::optional<ProcStat> parse_proc_stat(std::string_view text);
// Share of CPU time spent waiting for I/O between two readings (or since boot when `before`
// is all zeros). nullopt when no time passed.
std::optional<double> iowait_pct(const CpuTimes& before, const CpuTimes& after);

// /proc/pressure/{cpu,io,memory}: the avg10 of the "some" line.
std::optional<double> parse_psi_some_avg10(std::string_view text);

// /proc/<pid>/stat: the fields we need. The command name sits in parentheses and may itself
// contain spaces and ')' characters, so fields are counted from the last ')'.
struct PidStat {
  std::string comm;
  uint64_t utime_ticks = 0;
  uint64_t stime_ticks = 0;
  unsigned threads = 0;
  uint64_t start_ticks = 0;  // since boot
};
std::optional<PidStat> parse_pid_stat(std::string_view text);
// /proc/uptime -> seconds since boot.
std::optional<double> parse_uptime_s(std::string_view text);

// CUDA toolkit version: version.json ({"cuda": {"version": "12.4.131"}}) -> "12.4.131";
// version.txt ("CUDA Version 11.8.89") -> "11.8.89".
std::optional<std::string> parse_cuda_version_json(std::string_view text);
std::optional<std::string> parse_cuda_version_txt(std::string_view text);

// torch/version.py: __version__ = '2.3.1+cu121' and cuda = '12.1' (or the annotated
// `cuda: Optional[str] = '12.1'`; None for CPU-only builds).
struct TorchVersion {
  std::string version;
  std::optional<std::string> cuda;
};
std::optional<TorchVersion> parse_torch_version_py(std::string_view text);

// tensorflow/python/platform/build_info.py: 'cuda_version': '12.2' -> "12.2".
std::optional<std::string> parse_tf_build_info_cuda(std::string_view text);
// A dist-info folder name: "tensorflow-2.15.0.dist-info" -> {"tensorflow", "2.15.0"}.
std::optional<std::pair<std::string, std::string>> parse_dist_info_name(std::string_view name);

// The environment variables that change how CUDA, NCCL and the frameworks use GPUs.
bool is_gpu_env_var(std::string_view name);
std::map<std::string, std::string> select_gpu_env(const std::map<std::string, std::string>& env);

}  // namespace gw::host
