#include "sources/smi/model_util.h"

#include <string>

#include "sources/smi/text_util.h"

namespace gw::smi {

namespace {

// Lower-case, '_' and '-' -> ' ', so "HW_Power_Brake_Slowdown" == "hw power brake slowdown".
std::string normalize(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '_' || c == '-') c = ' ';
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.push_back(c);
  }
  return out;
}

// Capabilities gathered as bits; `which` folds to a constant.
struct Bits {
  uint64_t which = 0, on = 0;
  void set(Capability cap, bool v) {
    const uint64_t b = uint64_t{1} << static_cast<unsigned>(cap);
    which |= b;
    on |= b & (0 - static_cast<uint64_t>(v));  // no branch: the pattern varies by GPU
  }
};

bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

}  // namespace

void derive_capabilities(GpuState& gpu) {
  const GpuSample& s = gpu.sample;
  const DeviceInfo& d = gpu.info;
  Bits c;  // set at once: called for every GPU of every sample of a big log
  c.set(Capability::kTemperature, s.temp_c.has_value());
  c.set(Capability::kTempThresholds, d.temp_slowdown_c || d.temp_shutdown_c);
  c.set(Capability::kMemoryTemperature, s.mem_temp_c.has_value());
  c.set(Capability::kFan, s.fan_pct.has_value());
  c.set(Capability::kPower, s.power_mw.has_value());
  c.set(Capability::kPowerLimits, s.power_limit_mw || d.power_default_limit_mw);
  c.set(Capability::kClocks, s.sm_clock_mhz || s.graphics_clock_mhz || s.mem_clock_mhz);
  c.set(Capability::kMaxClocks, d.max_sm_clock_mhz || d.max_graphics_clock_mhz);
  c.set(Capability::kApplicationClocks, s.app_graphics_clock_mhz.has_value());
  c.set(Capability::kClockReasons, s.clock_reasons.has_value());
  const auto& v = s.violations;
  c.set(Capability::kViolationCounters,
        v.power_ns || v.hw_thermal_ns || v.sw_thermal_ns || v.hw_power_brake_ns || v.sync_boost_ns);
  c.set(Capability::kUtilization, s.util_gpu_pct.has_value());
  c.set(Capability::kEncoderDecoder, s.util_enc_pct || s.util_dec_pct);
  c.set(Capability::kMemory, s.mem_used_bytes.has_value());
  c.set(Capability::kMemoryReserved, s.mem_reserved_bytes.has_value());
  c.set(Capability::kPcieLink, s.pcie_gen || s.pcie_width);
  c.set(Capability::kPcieGpuMax, d.pcie_gpu_max_gen.has_value());
  c.set(Capability::kPcieThroughput, s.pcie_tx_kb_s || s.pcie_rx_kb_s);
  c.set(Capability::kPcieReplay, s.pcie_replays.has_value());
  c.set(Capability::kEcc, s.ecc_enabled.has_value());
  c.set(Capability::kRetiredPages, s.retired_pages_sbe || s.retired_pages_dbe);
  c.set(Capability::kRemappedRows, s.remapped_rows_uncorrectable || s.remapped_rows_pending);
  c.set(Capability::kPerformanceState, s.pstate.has_value());
  c.set(Capability::kPersistenceMode, s.persistence_mode.has_value());
  c.set(Capability::kComputeMode, s.compute_mode.has_value());
  c.set(Capability::kMigMode, s.mig_enabled.has_value());
  c.set(Capability::kProcesses, s.processes.has_value());
  c.set(Capability::kNvLink, !s.nvlinks.empty());
  gpu.info.caps.assign(c.which, c.on);
}

std::optional<int> parse_cuda_version(std::string_view v) {
  v = text::trim(v);
  const auto dot = v.find('.');
  auto major = text::parse_u64(v.substr(0, dot));
  if (!major || *major > 99) return std::nullopt;
  uint64_t minor = 0;
  if (dot != std::string_view::npos) {
    auto m = text::parse_u64(v.substr(dot + 1));
    if (!m || *m > 9) return std::nullopt;
    minor = *m;
  }
  return static_cast<int>(*major * 1000 + minor * 10);
}

std::string clean_version(std::string_view v) {
  v = text::trim(v);
  const auto br = v.find(" [");
  if (br != std::string_view::npos) v = text::trim(v.substr(0, br));
  return std::string(v);
}

bool apply_clock_reason(std::string_view name, bool active, GpuSample& s) {
  const std::string n = normalize(name);
  uint64_t bit = 0;
  // Order matters: the longer names contain the shorter ones.
  if (contains(n, "idle"))
    bit = clock_reason::kGpuIdle;
  else if (contains(n, "applications clocks"))
    bit = clock_reason::kApplicationsClocksSetting;
  else if (contains(n, "sw power cap"))
    bit = clock_reason::kSwPowerCap;
  else if (contains(n, "hw thermal"))
    bit = clock_reason::kHwThermalSlowdown;
  else if (contains(n, "hw power brake"))
    bit = clock_reason::kHwPowerBrakeSlowdown;
  else if (contains(n, "hw slowdown"))
    bit = clock_reason::kHwSlowdown;
  else if (contains(n, "sync boost"))
    bit = clock_reason::kSyncBoost;
  else if (contains(n, "sw thermal"))
    bit = clock_reason::kSwThermalSlowdown;
  else if (contains(n, "display clock"))
    bit = clock_reason::kDisplayClockSetting;
  else if (contains(n, "unknown"))  // legacy drivers' "Unknown" reason
    bit = clock_reason::kUnknown;
  else
    return false;
  uint64_t mask = s.clock_reasons.value_or(0);
  if (active) mask |= bit;
  s.clock_reasons = mask;
  return true;
}

std::optional<uint64_t>* violation_slot(std::string_view name, ViolationCounters& v) {
  const std::string n = normalize(name);
  if (contains(n, "power cap")) return &v.power_ns;
  if (contains(n, "sync boost")) return &v.sync_boost_ns;
  if (contains(n, "sw therm")) return &v.sw_thermal_ns;
  if (contains(n, "hw therm")) return &v.hw_thermal_ns;
  if (contains(n, "power brak")) return &v.hw_power_brake_ns;
  return nullptr;
}

}  // namespace gw::smi
