#include "sources/nvml/nvml_library.h"

#include <dlfcn.h>

#include <cstring>
#include <initializer_list>
#include <string>

namespace gw::nvml {
namespace {

// The one table: every logical call, the names to try newest first (reference §0).
// `b(slot, {names...}, required)` binds one entry.
template <class Bind>
void for_each_symbol(NvmlApi& a, Bind&& b) {
  b(a.init, {"nvmlInit_v2", "nvmlInit"}, true);
  b(a.shutdown, {"nvmlShutdown"}, true);
  b(a.device_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, true);
  b(a.handle_by_index, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, true);
  b(a.error_string, {"nvmlErrorString"}, false);
  b(a.driver_version, {"nvmlSystemGetDriverVersion"}, false);
  b(a.nvml_version, {"nvmlSystemGetNVMLVersion"}, false);
  b(a.cuda_driver_version, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
    false);
  b(a.process_name, {"nvmlSystemGetProcessName"}, false);
  b(a.name, {"nvmlDeviceGetName"}, false);
  b(a.uuid, {"nvmlDeviceGetUUID"}, false);
  b(a.serial, {"nvmlDeviceGetSerial"}, false);
  b(a.vbios_version, {"nvmlDeviceGetVbiosVersion"}, false);
  b(a.pci_info, {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
    false);
  b(a.minor_number, {"nvmlDeviceGetMinorNumber"}, false);
  b(a.architecture, {"nvmlDeviceGetArchitecture"}, false);
  b(a.temperature, {"nvmlDeviceGetTemperature"}, false);
  b(a.temperature_threshold, {"nvmlDeviceGetTemperatureThreshold"}, false);
  b(a.field_values, {"nvmlDeviceGetFieldValues"}, false);
  b(a.fan_speed, {"nvmlDeviceGetFanSpeed"}, false);
  b(a.power_usage, {"nvmlDeviceGetPowerUsage"}, false);
  b(a.enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"}, false);
  b(a.power_default_limit, {"nvmlDeviceGetPowerManagementDefaultLimit"}, false);
  b(a.power_limit_constraints, {"nvmlDeviceGetPowerManagementLimitConstraints"}, false);
  b(a.total_energy, {"nvmlDeviceGetTotalEnergyConsumption"}, false);
  b(a.clock_info, {"nvmlDeviceGetClockInfo"}, false);
  b(a.max_clock_info, {"nvmlDeviceGetMaxClockInfo"}, false);
  b(a.applications_clock, {"nvmlDeviceGetApplicationsClock"}, false);
  b(a.default_applications_clock, {"nvmlDeviceGetDefaultApplicationsClock"}, false);
  b(a.clock_reasons,
    {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}, false);
  b(a.violation_status, {"nvmlDeviceGetViolationStatus"}, false);
  b(a.utilization, {"nvmlDeviceGetUtilizationRates"}, false);
  b(a.encoder_utilization, {"nvmlDeviceGetEncoderUtilization"}, false);
  b(a.decoder_utilization, {"nvmlDeviceGetDecoderUtilization"}, false);
  b(a.memory_info_v2, {"nvmlDeviceGetMemoryInfo_v2"}, false);
  b(a.memory_info, {"nvmlDeviceGetMemoryInfo"}, false);
  b(a.pcie_curr_gen, {"nvmlDeviceGetCurrPcieLinkGeneration"}, false);
  b(a.pcie_curr_width, {"nvmlDeviceGetCurrPcieLinkWidth"}, false);
  b(a.pcie_max_gen, {"nvmlDeviceGetMaxPcieLinkGeneration"}, false);
  b(a.pcie_max_width, {"nvmlDeviceGetMaxPcieLinkWidth"}, false);
  b(a.pcie_gpu_max_gen, {"nvmlDeviceGetGpuMaxPcieLinkGeneration"}, false);
  b(a.pcie_throughput, {"nvmlDeviceGetPcieThroughput"}, false);
  b(a.pcie_replay_counter, {"nvmlDeviceGetPcieReplayCounter"}, false);
  b(a.ecc_mode, {"nvmlDeviceGetEccMode"}, false);
  b(a.total_ecc_errors, {"nvmlDeviceGetTotalEccErrors"}, false);
  b(a.retired_pages, {"nvmlDeviceGetRetiredPages"}, false);
  b(a.retired_pages_pending, {"nvmlDeviceGetRetiredPagesPendingStatus"}, false);
  b(a.remapped_rows, {"nvmlDeviceGetRemappedRows"}, false);
  b(a.performance_state, {"nvmlDeviceGetPerformanceState"}, false);
  b(a.persistence_mode, {"nvmlDeviceGetPersistenceMode"}, false);
  b(a.compute_mode, {"nvmlDeviceGetComputeMode"}, false);
  b(a.mig_mode, {"nvmlDeviceGetMigMode"}, false);
  b(a.fabric_info_v, {"nvmlDeviceGetGpuFabricInfoV"}, false);
  b(a.fabric_info, {"nvmlDeviceGetGpuFabricInfo"}, false);
  b(a.compute_processes,
    {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
     "nvmlDeviceGetComputeRunningProcesses"},
    false);
  b(a.graphics_processes,
    {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
     "nvmlDeviceGetGraphicsRunningProcesses"},
    false);
  b(a.nvlink_state, {"nvmlDeviceGetNvLinkState"}, false);
  b(a.nvlink_version, {"nvmlDeviceGetNvLinkVersion"}, false);
  b(a.nvlink_error_counter, {"nvmlDeviceGetNvLinkErrorCounter"}, false);
  b(a.event_set_create, {"nvmlEventSetCreate"}, false);
  b(a.supported_event_types, {"nvmlDeviceGetSupportedEventTypes"}, false);
  b(a.register_events, {"nvmlDeviceRegisterEvents"}, false);
  b(a.event_set_wait, {"nvmlEventSetWait_v2", "nvmlEventSetWait"}, false);
  b(a.event_set_free, {"nvmlEventSetFree"}, false);
  b(a.gpm_query_support, {"nvmlGpmQueryDeviceSupport"}, false);
  b(a.gpm_sample_alloc, {"nvmlGpmSampleAlloc"}, false);
  b(a.gpm_sample_free, {"nvmlGpmSampleFree"}, false);
  b(a.gpm_sample_get, {"nvmlGpmSampleGet"}, false);
  b(a.gpm_metrics_get, {"nvmlGpmMetricsGet"}, false);
  b(a.topology_common_ancestor, {"nvmlDeviceGetTopologyCommonAncestor"}, false);
}

bool ends_with_version(const char* name) {
  const size_t n = std::strlen(name);
  return n > 3 && name[n - 3] == '_' && name[n - 2] == 'v';
}

}  // namespace

Result<std::shared_ptr<const NvmlLibrary>> NvmlLibrary::open(const std::string& path) {
  // RTLD_LOCAL: NVML's symbols must not leak into the global namespace of the process (the
  // fake and a real library could otherwise interpose on each other in one test process).
  auto h = open_library(path, RTLD_LAZY | RTLD_LOCAL, "nvml.library_not_found",
                        "the NVIDIA management library",
                        "; no NVIDIA driver seems to be installed, or it is not on the library "
                        "path (try --nvml-lib PATH)");
  if (!h) return h.error();
  std::shared_ptr<NvmlLibrary> lib(new NvmlLibrary());
  lib->handle_ = *h;
  lib->path_ = path;
  const std::string missing_required =
      bind_symbols(*h, lib->api_, [](auto& api, auto f) { for_each_symbol(api, f); });
  if (!missing_required.empty()) {
    return make_error(
        "nvml.incompatible_library",
        "the library does not export " + missing_required + "; it is not a usable libnvidia-ml",
        path);
  }
  lib->api_.compute_processes_v1 =
      lib->api_.compute_processes && !ends_with_version(lib->api_.compute_processes.name);
  lib->api_.graphics_processes_v1 =
      lib->api_.graphics_processes && !ends_with_version(lib->api_.graphics_processes.name);
  return std::shared_ptr<const NvmlLibrary>(std::move(lib));
}

void* NvmlLibrary::extra_symbol(const char* name) const {
  return dlsym(handle_, name);
}

std::vector<std::string> NvmlLibrary::missing_symbols() const {
  return unbound_symbols(api_, [](auto& api, auto f) { for_each_symbol(api, f); });
}

std::string NvmlLibrary::describe(nvmlReturn_t r) const {
  const char* text = api_.error_string ? api_.error_string.fn(r) : nullptr;
  return std::string(text != nullptr ? text : "NVML error") + " (" + std::to_string(r) + ")";
}

}  // namespace gw::nvml
