// Snapshot: one moment of one machine, whatever produced it (live NVML, the fake NVML, a
// captured nvidia-smi dump, one row set of a CSV log). Every metric is optional: unknown
// and unsupported are std::nullopt, never 0. Units are in the names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/device.h"

namespace gw {

// Clock event ("throttle") reason bits, as NVML defines them.
namespace clock_reason {
inline constexpr uint64_t kGpuIdle = 0x1;
inline constexpr uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr uint64_t kSwPowerCap = 0x4;
inline constexpr uint64_t kHwSlowdown = 0x8;
inline constexpr uint64_t kSyncBoost = 0x10;
inline constexpr uint64_t kSwThermalSlowdown = 0x20;
inline constexpr uint64_t kHwThermalSlowdown = 0x40;
inline constexpr uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr uint64_t kDisplayClockSetting = 0x100;
// Legacy "Unknown" reason of old drivers (nvmlClocksThrottleReasonUnknown): kept so a capture
// that sets it is reported with its name instead of silently dropped.
inline constexpr uint64_t kUnknown = 0x8000000000000000ULL;
}  // namespace clock_reason

enum class ComputeMode {
  kDefault = 0,
  kExclusiveThread = 1,
  kProhibited = 2,
  kExclusiveProcess = 3
};

// A GPU's registration with the NVSwitch fabric (NVML's GpuFabricInfo, nvidia-smi's "Fabric"
// State). On NVSwitch systems CUDA refuses the GPU (error 802) until it is kCompleted; GPUs
// without a fabric say kNotSupported. Numbered as NVML_GPU_FABRIC_STATE_*.
enum class FabricState : uint8_t {
  kNotSupported = 0,
  kNotStarted = 1,
  kInProgress = 2,
  kCompleted = 3
};
std::string_view fabric_state_name(FabricState s);

struct ProcessInfo {
  uint32_t pid = 0;
  std::optional<uint64_t> used_mem_bytes;
  std::optional<std::string> name;
  bool graphics = false;  // false: compute process

  bool operator==(const ProcessInfo&) const = default;
};

struct NvLinkInfo {
  unsigned link = 0;
  bool active = false;
  std::optional<unsigned> version;
  std::optional<uint64_t> replay_errors;
  std::optional<uint64_t> recovery_errors;
  std::optional<uint64_t> crc_flit_errors;
  std::optional<uint64_t> crc_data_errors;

  bool operator==(const NvLinkInfo&) const = default;
};

// Cumulative time spent held back by each limiter, nanoseconds since driver load.
// Diff two samples to get the share of a window spent throttled.
struct ViolationCounters {
  std::optional<uint64_t> power_ns;
  std::optional<uint64_t> thermal_ns;
  std::optional<uint64_t> sw_thermal_ns;
  std::optional<uint64_t> hw_thermal_ns;
  std::optional<uint64_t> hw_power_brake_ns;
  std::optional<uint64_t> board_limit_ns;
  std::optional<uint64_t> reliability_ns;
  std::optional<uint64_t> sync_boost_ns;

  bool operator==(const ViolationCounters&) const = default;
};

// GPU performance monitoring (NVML GPM, Hopper and later): each value is the share of the
// interval between two GPM samples, in percent (0..100) as NVML reports it. nullopt when the
// GPU or the driver has no GPM, or for the first reading (GPM needs two samples).
struct GpmMetrics {
  std::optional<double> graphics_util_pct;  // graphics engine active
  std::optional<double> sm_util_pct;        // SMs with at least one warp assigned
  std::optional<double> sm_occupancy_pct;   // resident warps / theoretical maximum
  std::optional<double> tensor_util_pct;    // any tensor pipe active
  std::optional<double> dram_bw_util_pct;   // DRAM bandwidth / theoretical maximum
  std::optional<double> fp64_util_pct;
  std::optional<double> fp32_util_pct;
  std::optional<double> fp16_util_pct;

  bool any() const {
    return graphics_util_pct || sm_util_pct || sm_occupancy_pct || tensor_util_pct ||
           dram_bw_util_pct || fp64_util_pct || fp32_util_pct || fp16_util_pct;
  }
  bool operator==(const GpmMetrics&) const = default;
};

// The moment-to-moment readings of one GPU.
struct GpuSample {
  std::optional<int> temp_c;
  std::optional<int> mem_temp_c;
  // Drivers that hide absolute thresholds give "GPU T.Limit Temp": signed degrees below the
  // T.Limit (negative: above it). The per-limit offsets are in DeviceInfo::tlimit_*_c.
  std::optional<int> tlimit_margin_c;
  std::optional<unsigned> fan_pct;

  std::optional<uint32_t> power_mw;
  std::optional<uint32_t> power_limit_mw;  // enforced limit right now
  std::optional<uint64_t> energy_mj;       // since driver load

  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> graphics_clock_mhz;
  std::optional<unsigned> mem_clock_mhz;
  std::optional<unsigned> app_graphics_clock_mhz;
  std::optional<unsigned> app_mem_clock_mhz;
  std::optional<uint64_t> clock_reasons;  // clock_reason bits
  ViolationCounters violations;

  std::optional<unsigned> util_gpu_pct;
  std::optional<unsigned> util_mem_pct;  // memory controller busy share, not VRAM usage
  std::optional<unsigned> util_enc_pct;
  std::optional<unsigned> util_dec_pct;

  std::optional<uint64_t> mem_total_bytes;
  std::optional<uint64_t> mem_used_bytes;
  std::optional<uint64_t> mem_free_bytes;
  std::optional<uint64_t> mem_reserved_bytes;

  std::optional<unsigned> pcie_gen;
  std::optional<unsigned> pcie_width;
  std::optional<uint64_t> pcie_tx_kb_s;
  std::optional<uint64_t> pcie_rx_kb_s;
  std::optional<uint64_t> pcie_replays;

  std::optional<bool> ecc_enabled;
  std::optional<bool> ecc_pending_enabled;
  std::optional<uint64_t> ecc_sbe_volatile;
  std::optional<uint64_t> ecc_dbe_volatile;
  std::optional<uint64_t> ecc_sbe_aggregate;
  std::optional<uint64_t> ecc_dbe_aggregate;
  // The SRAM share of the uncorrectable totals above (R510+ split SRAM from DRAM; parity and
  // SEC-DED summed) and the driver's SRAM RMA flag (R550+ "SRAM Threshold Exceeded").
  std::optional<uint64_t> ecc_sram_uncorrectable_volatile;
  std::optional<uint64_t> ecc_sram_uncorrectable_aggregate;
  std::optional<bool> ecc_sram_threshold_exceeded;
  std::optional<unsigned> retired_pages_sbe;
  std::optional<unsigned> retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<unsigned> remapped_rows_correctable;
  std::optional<unsigned> remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending;
  std::optional<bool> remapped_rows_failure;

  std::optional<unsigned> pstate;  // 0 = max performance ... 15
  std::optional<bool> persistence_mode;
  std::optional<ComputeMode> compute_mode;
  std::optional<bool> mig_enabled;
  std::optional<bool> mig_pending;
  std::optional<FabricState> fabric_state;
  // The registration's result once kCompleted: "Success" or the error nvidia-smi printed
  // ("Insufficient Resources"); empty when not given or N/A.
  std::string fabric_status;
  // The fabric's health (NVML's healthMask, nvidia-smi -q "Fabric > Health", R550+): false when
  // a condition is flagged, and `fabric_health` then names each in nvidia-smi's words, "; "
  // between ("Summary Unhealthy; Bandwidth Degraded"). nullopt: not reported (N/A, older driver).
  std::optional<bool> fabric_healthy;
  std::string fabric_health;

  std::optional<std::vector<ProcessInfo>> processes;  // nullopt: could not be listed
  std::vector<NvLinkInfo> nvlinks;
  GpmMetrics gpm;

  bool operator==(const GpuSample&) const = default;
};

// How reachable a GPU was while sampling.
enum class GpuAccess {
  kOk,
  kLost,           // GPU_IS_LOST: fallen off the bus
  kResetRequired,  // RESET_REQUIRED
  kHung,           // a call did not return within its deadline
  kNoPermission,
  kError,  // some other failure, see errors
};

struct GpuState {
  DeviceInfo info;
  GpuSample sample;
  GpuAccess access = GpuAccess::kOk;
  std::vector<std::string> errors;  // per-call failures worth showing ("nvmlDeviceGetX: timed out")
  // Readings a tool printed a failure for instead of a value ("fan.speed: [Unknown Error]",
  // "temperature: ERR!"): a reading that failed is a fact about the GPU, never "no value".
  std::vector<std::string> failed_readings;

  bool operator==(const GpuState&) const = default;
};

struct Snapshot {
  int64_t time_ms = 0;  // Unix epoch ms; 0 when the input carries no time
  std::string source;   // "nvml", "fake:scenarios/demo.json", "smi-xml:dump.xml", ...
  std::optional<std::string> hostname;
  std::optional<std::string> driver_version;  // "580.65.06"
  std::optional<std::string> nvml_version;
  std::optional<int> cuda_driver_version;  // 12040 = CUDA 12.4, the newest the driver supports
  bool cuda_version_failed = false;        // nvidia-smi printed "CUDA Version: ERR!"
  std::vector<GpuState> gpus;

  bool operator==(const Snapshot&) const = default;
};

std::string_view gpu_access_name(GpuAccess a);
// Formats NVML's CUDA integer (12040) as "12.4".
std::string cuda_version_string(int v);

}  // namespace gw
