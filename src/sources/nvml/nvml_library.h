// NvmlLibrary: libnvidia-ml.so.1 opened with dlopen and its ONE table of symbols, each
// resolved through its versioned fallbacks (nvmlInit_v2 -> nvmlInit, ..._v3 -> _v2 -> plain).
// A symbol the library lacks stays null: that is a missing capability, never a failed start.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/dl_symbols.h"
#include "core/result.h"
#include "sources/nvml/nvml_types.h"

namespace gw::nvml {

using Dev = nvmlDevice_t;
using Uint = unsigned int;
using Ull = unsigned long long;

struct NvmlApi {
  // Required: without these the library is not an NVML we can use.
  Sym<nvmlReturn_t (*)()> init;
  Sym<nvmlReturn_t (*)()> shutdown;
  Sym<nvmlReturn_t (*)(Uint*)> device_count;
  Sym<nvmlReturn_t (*)(Uint, Dev*)> handle_by_index;
  // Optional.
  Sym<const char* (*)(nvmlReturn_t)> error_string;
  Sym<nvmlReturn_t (*)(char*, Uint)> driver_version;
  Sym<nvmlReturn_t (*)(char*, Uint)> nvml_version;
  Sym<nvmlReturn_t (*)(int*)> cuda_driver_version;
  Sym<nvmlReturn_t (*)(Uint, char*, Uint)> process_name;

  Sym<nvmlReturn_t (*)(Dev, char*, Uint)> name;
  Sym<nvmlReturn_t (*)(Dev, char*, Uint)> uuid;
  Sym<nvmlReturn_t (*)(Dev, char*, Uint)> serial;
  Sym<nvmlReturn_t (*)(Dev, char*, Uint)> vbios_version;
  Sym<nvmlReturn_t (*)(Dev, nvmlPciInfo_t*)> pci_info;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> minor_number;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> architecture;

  Sym<nvmlReturn_t (*)(Dev, int, Uint*)> temperature;
  Sym<nvmlReturn_t (*)(Dev, int, Uint*)> temperature_threshold;
  Sym<nvmlReturn_t (*)(Dev, int, nvmlFieldValue_t*)> field_values;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> fan_speed;

  Sym<nvmlReturn_t (*)(Dev, Uint*)> power_usage;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> enforced_power_limit;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> power_default_limit;
  Sym<nvmlReturn_t (*)(Dev, Uint*, Uint*)> power_limit_constraints;
  Sym<nvmlReturn_t (*)(Dev, Ull*)> total_energy;

  Sym<nvmlReturn_t (*)(Dev, int, Uint*)> clock_info;
  Sym<nvmlReturn_t (*)(Dev, int, Uint*)> max_clock_info;
  Sym<nvmlReturn_t (*)(Dev, int, Uint*)> applications_clock;
  Sym<nvmlReturn_t (*)(Dev, int, Uint*)> default_applications_clock;
  Sym<nvmlReturn_t (*)(Dev, Ull*)> clock_reasons;
  Sym<nvmlReturn_t (*)(Dev, int, nvmlViolationTime_t*)> violation_status;

  Sym<nvmlReturn_t (*)(Dev, nvmlUtilization_t*)> utilization;
  Sym<nvmlReturn_t (*)(Dev, Uint*, Uint*)> encoder_utilization;
  Sym<nvmlReturn_t (*)(Dev, Uint*, Uint*)> decoder_utilization;

  Sym<nvmlReturn_t (*)(Dev, nvmlMemory_v2_t*)> memory_info_v2;
  Sym<nvmlReturn_t (*)(Dev, nvmlMemory_t*)> memory_info;

  Sym<nvmlReturn_t (*)(Dev, Uint*)> pcie_curr_gen;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> pcie_curr_width;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> pcie_max_gen;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> pcie_max_width;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> pcie_gpu_max_gen;
  Sym<nvmlReturn_t (*)(Dev, int, Uint*)> pcie_throughput;
  Sym<nvmlReturn_t (*)(Dev, Uint*)> pcie_replay_counter;

  Sym<nvmlReturn_t (*)(Dev, int*, int*)> ecc_mode;
  Sym<nvmlReturn_t (*)(Dev, int, int, Ull*)> total_ecc_errors;
  Sym<nvmlReturn_t (*)(Dev, int, Uint*, Ull*)> retired_pages;
  Sym<nvmlReturn_t (*)(Dev, int*)> retired_pages_pending;
  Sym<nvmlReturn_t (*)(Dev, Uint*, Uint*, Uint*, Uint*)> remapped_rows;

  Sym<nvmlReturn_t (*)(Dev, int*)> performance_state;
  Sym<nvmlReturn_t (*)(Dev, int*)> persistence_mode;
  Sym<nvmlReturn_t (*)(Dev, int*)> compute_mode;
  Sym<nvmlReturn_t (*)(Dev, Uint*, Uint*)> mig_mode;
  Sym<nvmlReturn_t (*)(Dev, nvmlGpuFabricInfo_v2_t*)> fabric_info_v;  // preferred (R550+)
  Sym<nvmlReturn_t (*)(Dev, nvmlGpuFabricInfo_t*)> fabric_info;       // R525+, deprecated

  // The element type depends on the export found: _v3/_v2 fill nvmlProcessInfo_t (24 B),
  // the unsuffixed one nvmlProcessInfo_v1_t (16 B). See processes_v1.
  Sym<nvmlReturn_t (*)(Dev, Uint*, void*)> compute_processes;
  Sym<nvmlReturn_t (*)(Dev, Uint*, void*)> graphics_processes;

  Sym<nvmlReturn_t (*)(Dev, Uint, int*)> nvlink_state;
  Sym<nvmlReturn_t (*)(Dev, Uint, Uint*)> nvlink_version;
  Sym<nvmlReturn_t (*)(Dev, Uint, int, Ull*)> nvlink_error_counter;

  // Events (Xid and ECC as they happen, not on the next poll).
  Sym<nvmlReturn_t (*)(nvmlEventSet_t*)> event_set_create;
  Sym<nvmlReturn_t (*)(Dev, Ull*)> supported_event_types;
  Sym<nvmlReturn_t (*)(Dev, Ull, nvmlEventSet_t)> register_events;
  Sym<nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, Uint)> event_set_wait;
  Sym<nvmlReturn_t (*)(nvmlEventSet_t)> event_set_free;

  // GPM (Hopper and later, driver 520+): absent on older drivers.
  Sym<nvmlReturn_t (*)(Dev, nvmlGpmSupport_t*)> gpm_query_support;
  Sym<nvmlReturn_t (*)(nvmlGpmSample_t*)> gpm_sample_alloc;
  Sym<nvmlReturn_t (*)(nvmlGpmSample_t)> gpm_sample_free;
  Sym<nvmlReturn_t (*)(Dev, nvmlGpmSample_t)> gpm_sample_get;
  Sym<nvmlReturn_t (*)(nvmlGpmMetricsGet_t*)> gpm_metrics_get;

  // The closest PCIe ancestor of two GPUs (nvmlGpuTopologyLevel_t as an int).
  Sym<nvmlReturn_t (*)(Dev, Dev, int*)> topology_common_ancestor;

  bool compute_processes_v1 = false;
  bool graphics_processes_v1 = false;
};

class NvmlLibrary {
 public:
  // dlopen(path, RTLD_LAZY | RTLD_LOCAL) and resolve the table. Errors:
  // nvml.library_not_found (no such library: no NVIDIA driver installed?) and
  // nvml.incompatible_library (a required symbol is missing).
  static Result<std::shared_ptr<const NvmlLibrary>> open(const std::string& path);

  const NvmlApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  // A symbol outside the table (the fake's gwfake_* controls); nullptr when absent.
  void* extra_symbol(const char* name) const;
  // The names of every optional table entry the library does not export.
  std::vector<std::string> missing_symbols() const;
  // "GPU is lost (15)": nvmlErrorString text with the number, which is what we branch on.
  std::string describe(nvmlReturn_t r) const;

  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  // Never dlcloses: an abandoned hung call may still be running inside the library.
  ~NvmlLibrary() = default;

 private:
  NvmlLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  NvmlApi api_;
};

}  // namespace gw::nvml
