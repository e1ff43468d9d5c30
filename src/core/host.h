// HostFacts and Topology: what the machine around the GPUs says (read under a root path so
// tests can point at a fixture tree), and how GPUs connect (nvidia-smi topo -m).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gw {

struct PciDeviceFacts {
  std::string pci_bus_id;                 // normalised
  std::optional<std::string> device_id;   // "0x2330"
  std::optional<double> link_speed_gt_s;  // current_link_speed
  std::optional<double> max_link_speed_gt_s;
  std::optional<unsigned> link_width;
  std::optional<unsigned> max_link_width;
  std::optional<int> numa_node;
  std::optional<std::string> driver;    // "nvidia", "nouveau", "vfio-pci"
  std::optional<bool> link_downgraded;  // lspci -vv LnkSta "(downgraded)"
  // Which field lspci marked "(downgraded)": it compares LnkSta with LnkCap itself, so the
  // mark says the link is below its capability even where a paste left LnkCap out.
  bool speed_downgraded = false;
  bool width_downgraded = false;
  std::optional<std::string> name;  // lspci's device description
};

struct ProcessCpuFacts {
  uint32_t pid = 0;
  std::string name;
  std::optional<double> cpu_pct;  // 100 = one full core
  std::optional<unsigned> threads;
};

struct CudaInstall {
  std::string path;     // "/usr/local/cuda-12.4"
  std::string version;  // "12.4"
  bool operator==(const CudaInstall&) const = default;
};

struct FrameworkRuntime {
  std::string name;                 // "torch"
  std::string version;              // "2.3.1"
  std::optional<std::string> cuda;  // "12.1": the CUDA runtime it was built with
  std::string path;
  bool operator==(const FrameworkRuntime&) const = default;
};

struct HostFacts {
  std::optional<std::string> kernel_module_version;  // /proc/driver/nvidia/version
  std::optional<bool> nvidia_module_loaded;
  std::optional<bool> nouveau_loaded;
  std::optional<unsigned> dev_nvidia_nodes;  // /dev/nvidia[0-9]+
  std::optional<bool> dev_nvidiactl;
  std::optional<bool> in_container;
  // The capture shows a WSL 2 distribution (wsl.exe, /mnt/c/, a WSL kernel or library path):
  // no NVIDIA kernel module there, the Windows driver serves the GPU.
  bool wsl = false;
  std::vector<PciDeviceFacts> nvidia_pci_devices;  // vendor 0x10de, display/3D class

  std::optional<unsigned> cpu_count;
  std::optional<double> load1;
  std::optional<double> iowait_pct;
  std::optional<double> psi_cpu_some_avg10;
  std::optional<double> psi_io_some_avg10;
  std::optional<double> psi_mem_some_avg10;
  std::vector<ProcessCpuFacts> gpu_processes;

  std::vector<CudaInstall> cuda_toolkits;
  std::vector<FrameworkRuntime> frameworks;
  std::map<std::string, std::string> env;  // CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, ...

  // From captured reports: what nvidia-smi / NVML / collect_env say about the user-space driver
  // ("535.129.03") and the newest CUDA it supports ("12.2"); the kernel module's own version
  // stays in kernel_module_version.
  std::optional<std::string> smi_driver_version;
  std::optional<std::string> smi_cuda_version;
  std::optional<bool> torch_cuda_available;   // collect_env "Is CUDA available: No"
  std::optional<unsigned> cuda_device_count;  // a program's "CUDA device count: 1"
  std::vector<std::string> gpu_models;        // collect_env "GPU 0: Tesla V100-PCIE-16GB"
  std::vector<std::string> sources;           // "env.txt: python -m torch.utils.collect_env", ...
};

// nvidia-smi topo -m: the link between every pair of GPUs and each GPU's CPU/NUMA affinity.
struct Topology {
  std::vector<std::string> gpu_names;  // "GPU0", ...
  // links[i][j]: "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS"
  std::vector<std::vector<std::string>> links;
  std::vector<std::optional<std::string>> cpu_affinity;  // "0-47,96-143"
  std::vector<std::optional<int>> numa_affinity;
  // NIC rows/columns (R470+): "NIC0".., their devices from the NIC Legend ("mlx5_0"), the link
  // from each GPU to each NIC (gpu_nic_links[gpu][nic]) and between NICs.
  std::vector<std::string> nic_names;
  std::vector<std::optional<std::string>> nic_devices;
  std::vector<std::vector<std::string>> gpu_nic_links;
  std::vector<std::vector<std::string>> nic_links;
  std::vector<std::optional<int>> gpu_numa_id;  // "GPU NUMA ID" column
};

}  // namespace gw
