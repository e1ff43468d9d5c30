// The NVML GpuSource: init and enumeration, then one Snapshot per sample(), every NVML call
// under a deadline. The same code reads the real driver and the fake NVML (demo, scenarios).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "sources/gpu_source.h"

namespace gw::nvml {

struct NvmlSourceOptions {
  std::string library_path = "libnvidia-ml.so.1";
  // Set for the fake NVML: the scenario it should play (loaded through gwfake_load_scenario).
  std::optional<std::string> scenario_path;
  std::chrono::milliseconds call_deadline{2000};
  std::string label = "nvml";  // Snapshot::source
};

// Whole-source failures, each with a stable code (docs/nvml-source.md):
// nvml.library_not_found, nvml.incompatible_library, nvml.driver_not_loaded,
// nvml.lib_rm_version_mismatch, nvml.no_permission, nvml.init_failed, nvml.init_hung,
// nvml.no_devices, nvml.not_fake, scenario.* (a scenario the fake could not load).
Result<std::unique_ptr<GpuSource>> open_nvml_source(const NvmlSourceOptions& options);

class NvmlLibrary;
// Hands `scenario` to the fake NVML (gwfake_load_scenario); returns the hostname it names.
// Errors: nvml.not_fake, scenario.invalid.
Result<std::optional<std::string>> load_fake_scenario(const NvmlLibrary& lib,
                                                      const std::string& scenario);
std::optional<std::string> local_hostname();

// Maps a failed nvmlInit return code to the error a user can act on.
Error init_error(int code, const std::string& text, const std::string& library_path);

}  // namespace gw::nvml
