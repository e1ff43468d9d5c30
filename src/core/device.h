// DeviceInfo: what a GPU is (identity and static limits), and what its source can tell
// about it (the capability set). Unknown or unsupported is std::nullopt, never 0.
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gw {

// What a source could read for one GPU. A capability is absent when the library lacks the
// symbol, the GPU answers NOT_SUPPORTED, or the capture format has no such field.
enum class Capability : uint8_t {
  kTemperature,
  kTempThresholds,
  kMemoryTemperature,
  kFan,
  kPower,
  kPowerLimits,
  kEnergy,
  kClocks,
  kMaxClocks,
  kApplicationClocks,
  kClockReasons,
  kViolationCounters,
  kUtilization,
  kEncoderDecoder,
  kMemory,
  kMemoryReserved,
  kPcieLink,
  kPcieGpuMax,
  kPcieThroughput,
  kPcieReplay,
  kEcc,
  kRetiredPages,
  kRemappedRows,
  kPerformanceState,
  kPersistenceMode,
  kComputeMode,
  kMigMode,
  kProcesses,
  kNvLink,
  kFabric,  // NVSwitch fabric registration (nvmlDeviceGetGpuFabricInfo[V])
  kCount    // keep last
};

inline constexpr size_t kCapabilityCount = static_cast<size_t>(Capability::kCount);

// Stable lower_snake names, used in JSON and scenario files.
std::string_view capability_name(Capability c);
std::optional<Capability> capability_from_name(std::string_view name);

class CapabilitySet {
 public:
  void set(Capability c, bool on = true) { bits_.set(static_cast<size_t>(c), on); }
  // The capabilities whose bit (1 << Capability) is in `which` become those in `on`, at once.
  void assign(uint64_t which, uint64_t on) {
    static_assert(kCapabilityCount <= 64);
    bits_ =
        (bits_ & ~std::bitset<kCapabilityCount>(which)) | std::bitset<kCapabilityCount>(on & which);
  }
  bool has(Capability c) const { return bits_.test(static_cast<size_t>(c)); }
  size_t count() const { return bits_.count(); }
  bool operator==(const CapabilitySet&) const = default;

 private:
  std::bitset<kCapabilityCount> bits_;
};

struct DeviceInfo {
  unsigned index = 0;  // NVML index (or capture order); key devices by uuid/pci_bus_id
  std::string name;    // "NVIDIA H100 80GB HBM3"
  std::string uuid;    // "GPU-0b11d014-..."
  std::optional<std::string> serial;
  std::string pci_bus_id;  // normalised "00000000:18:00.0" (8-digit domain, upper-case hex)
  std::optional<unsigned> minor_number;     // N in /dev/nvidiaN
  std::optional<std::string> architecture;  // "Hopper", "Ampere", ...
  std::optional<std::string> vbios_version;

  std::optional<uint64_t> mem_total_bytes;

  // Temperature thresholds, degrees Celsius.
  std::optional<int> temp_slowdown_c;       // HW slowdown begins
  std::optional<int> temp_shutdown_c;       // HW protection shutdown
  std::optional<int> temp_max_operating_c;  // "GPU max": clocks may drop below base above it
  std::optional<int> temp_mem_max_c;        // memory temperature where SW slowdown begins
  // The same limits relative to T.Limit, as margin-only drivers report them ("GPU Slowdown
  // T.Limit Temp : -2 C": slowdown begins 2 C above T.Limit). Compare with
  // GpuSample::tlimit_margin_c: degrees below a limit = tlimit_margin_c - tlimit_<limit>_c.
  std::optional<int> tlimit_shutdown_c;
  std::optional<int> tlimit_slowdown_c;
  std::optional<int> tlimit_max_operating_c;

  // Power limits, milliwatts.
  std::optional<uint32_t> power_default_limit_mw;
  std::optional<uint32_t> power_min_limit_mw;
  std::optional<uint32_t> power_max_limit_mw;

  // Maximum clocks, MHz.
  std::optional<unsigned> max_sm_clock_mhz;
  std::optional<unsigned> max_graphics_clock_mhz;
  std::optional<unsigned> max_mem_clock_mhz;
  std::optional<unsigned> default_app_graphics_clock_mhz;
  std::optional<unsigned> default_app_mem_clock_mhz;

  // PCIe maxima. pcie_max_* is what the device *and* the system allow together;
  // pcie_gpu_max_gen is what the GPU alone supports (GPU max > system max: a slot/riser limit).
  std::optional<unsigned> pcie_max_gen;
  std::optional<unsigned> pcie_gpu_max_gen;
  std::optional<unsigned> pcie_max_width;

  CapabilitySet caps;

  bool operator==(const DeviceInfo&) const = default;
};

}  // namespace gw
