#include "sources/smi/csv_fields.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "core/event.h"
#include "sources/smi/model_util.h"
#include "sources/smi/text_util.h"

namespace gw::smi {

namespace {

using F = CsvField;
using text::parse_u64;
using text::to_unsigned;

// Field names as nvidia-smi --help-query-gpu spells them, with their older aliases.
constexpr std::pair<std::string_view, CsvField> kFields[] = {
    {"timestamp", F::kTimestamp},
    {"index", F::kIndex},
    {"name", F::kName},
    {"gpu_name", F::kName},
    {"pci.bus_id", F::kBusId},
    {"gpu_bus_id", F::kBusId},
    {"uuid", F::kUuid},
    {"gpu_uuid", F::kUuid},
    {"serial", F::kSerial},
    {"gpu_serial", F::kSerial},
    {"driver_version", F::kDriver},
    {"vbios_version", F::kVbios},
    {"temperature.gpu", F::kTemp},
    {"temperature.memory", F::kMemTemp},
    {"temperature.gpu.tlimit", F::kTempTlimit},  // R535+: signed margin, not a reading
    {"power.draw", F::kPowerDraw},
    {"power.draw.average", F::kPowerDrawAverage},
    {"power.draw.instant", F::kPowerDrawInstant},
    {"power.limit", F::kPowerLimit},
    {"enforced.power.limit", F::kEnforcedLimit},
    {"power.default_limit", F::kDefaultLimit},
    {"power.min_limit", F::kMinLimit},
    {"power.max_limit", F::kMaxLimit},
    {"utilization.gpu", F::kUtilGpu},
    {"utilization.memory", F::kUtilMem},
    {"utilization.encoder", F::kUtilEnc},
    {"utilization.decoder", F::kUtilDec},
    {"memory.total", F::kMemTotal},
    {"memory.used", F::kMemUsed},
    {"memory.free", F::kMemFree},
    {"memory.reserved", F::kMemReserved},
    {"clocks.gr", F::kClkGr},
    {"clocks.current.graphics", F::kClkGr},
    {"clocks.sm", F::kClkSm},
    {"clocks.current.sm", F::kClkSm},
    {"clocks.mem", F::kClkMem},
    {"clocks.current.memory", F::kClkMem},
    {"clocks.applications.graphics", F::kClkAppGr},
    {"clocks.applications.gr", F::kClkAppGr},
    {"clocks.applications.memory", F::kClkAppMem},
    {"clocks.applications.mem", F::kClkAppMem},
    {"clocks.max.graphics", F::kClkMaxGr},
    {"clocks.max.gr", F::kClkMaxGr},
    {"clocks.max.sm", F::kClkMaxSm},
    {"clocks.max.memory", F::kClkMaxMem},
    {"clocks.max.mem", F::kClkMaxMem},
    {"clocks.default_applications.graphics", F::kClkDefAppGr},
    {"clocks.default_applications.memory", F::kClkDefAppMem},
    {"pcie.link.gen.current", F::kPcieGen},
    {"pcie.link.gen.max", F::kPcieGenMax},
    {"pcie.link.gen.gpumax", F::kPcieGenGpuMax},
    {"pcie.link.gen.hostmax", F::kPcieGenHostMax},
    {"pcie.link.width.current", F::kPcieWidth},
    {"pcie.link.width.max", F::kPcieWidthMax},
    {"pstate", F::kPstate},
    {"fan.speed", F::kFan},
    {"persistence_mode", F::kPersistence},
    {"compute_mode", F::kComputeMode},
    {"mig.mode.current", F::kMigCurrent},
    {"mig.mode.pending", F::kMigPending},
    {"ecc.mode.current", F::kEccCurrent},
    {"ecc.mode.pending", F::kEccPending},
    {"ecc.errors.corrected.volatile.device_memory", F::kEccSbeVol},
    {"ecc.errors.corrected.volatile.dram", F::kEccSbeVol},
    {"ecc.errors.uncorrected.volatile.device_memory", F::kEccDbeVol},
    {"ecc.errors.uncorrected.volatile.dram", F::kEccDbeVol},
    {"ecc.errors.corrected.aggregate.device_memory", F::kEccSbeAgg},
    {"ecc.errors.corrected.aggregate.dram", F::kEccSbeAgg},
    {"ecc.errors.uncorrected.aggregate.device_memory", F::kEccDbeAgg},
    {"ecc.errors.uncorrected.aggregate.dram", F::kEccDbeAgg},
    // .total is every location (DRAM, SRAM, caches, register file): what the rules and the
    // -q text mean by the counts; it wins over .device_memory/.dram whichever comes first.
    {"ecc.errors.corrected.volatile.total", F::kEccSbeVolTotal},
    {"ecc.errors.uncorrected.volatile.total", F::kEccDbeVolTotal},
    {"ecc.errors.corrected.aggregate.total", F::kEccSbeAggTotal},
    {"ecc.errors.uncorrected.aggregate.total", F::kEccDbeAggTotal},
    {"ecc.errors.uncorrected.volatile.sram", F::kEccSramUncVol},
    {"ecc.errors.uncorrected.aggregate.sram", F::kEccSramUncAgg},
    {"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", F::kEccSramThreshold},
    {"retired_pages.single_bit_ecc.count", F::kRetiredSbe},
    {"retired_pages.sbe", F::kRetiredSbe},
    {"retired_pages.double_bit.count", F::kRetiredDbe},
    {"retired_pages.dbe", F::kRetiredDbe},
    {"retired_pages.pending", F::kRetiredPending},
    {"remapped_rows.correctable", F::kRemapCorr},
    {"remapped_rows.uncorrectable", F::kRemapUnc},
    {"remapped_rows.pending", F::kRemapPending},
    {"remapped_rows.failure", F::kRemapFailure},
    {"gpu_recovery_action", F::kRecoveryAction},
    {"fabric.state", F::kFabricState},
    {"fabric.status", F::kFabricStatus},
    {"reset_status.reset_required", F::kResetRequired},
    {"reset_status.drain_and_reset_recommended", F::kDrainReset},
    {"hostname", F::kHostname},
};

// Fills an optional only if it is still empty (e.g. ".dram" after ".device_memory").
template <class T, class V>
void fill(std::optional<T>& slot, std::optional<V> v) {
  if (!slot && v) slot = static_cast<T>(*v);
}

void apply_power_temp(F f, std::string_view v, GpuState& g) {
  GpuSample& s = g.sample;
  DeviceInfo& d = g.info;
  switch (f) {
    case F::kTemp:
      s.temp_c = text::to_int(text::parse_i64(v));
      break;
    case F::kMemTemp:
      s.mem_temp_c = text::to_int(text::parse_i64(v));
      break;
    case F::kTempTlimit:
      s.tlimit_margin_c = text::to_int(text::parse_i64(v));
      break;
    case F::kPowerDraw:
      s.power_mw = text::parse_watts_mw(v);
      break;
    case F::kPowerDrawAverage:
      fill(s.power_mw, text::parse_watts_mw(v));
      break;
    case F::kPowerDrawInstant:
      fill(s.power_mw, text::parse_watts_mw(v));
      break;
    case F::kEnforcedLimit:
      if (auto mw = text::parse_watts_mw(v)) s.power_limit_mw = mw;
      break;
    case F::kPowerLimit:
      fill(s.power_limit_mw, text::parse_watts_mw(v));
      break;
    case F::kDefaultLimit:
      d.power_default_limit_mw = text::parse_watts_mw(v);
      break;
    case F::kMinLimit:
      d.power_min_limit_mw = text::parse_watts_mw(v);
      break;
    case F::kMaxLimit:
      d.power_max_limit_mw = text::parse_watts_mw(v);
      break;
    default:
      break;
  }
}

void apply_clocks_util(F f, std::string_view v, GpuState& g) {
  GpuSample& s = g.sample;
  DeviceInfo& d = g.info;
  // Parsed inside the cases: most columns of a wide CSV do not reach this switch.
  auto num = [&] { return to_unsigned(parse_u64(v)); };
  switch (f) {
    case F::kUtilGpu:
      s.util_gpu_pct = num();
      break;
    case F::kUtilMem:
      s.util_mem_pct = num();
      break;
    case F::kUtilEnc:
      s.util_enc_pct = num();
      break;
    case F::kUtilDec:
      s.util_dec_pct = num();
      break;
    case F::kClkGr:
      s.graphics_clock_mhz = num();
      break;
    case F::kClkSm:
      s.sm_clock_mhz = num();
      break;
    case F::kClkMem:
      s.mem_clock_mhz = num();
      break;
    case F::kClkAppGr:
      s.app_graphics_clock_mhz = num();
      break;
    case F::kClkAppMem:
      s.app_mem_clock_mhz = num();
      break;
    case F::kClkMaxGr:
      d.max_graphics_clock_mhz = num();
      break;
    case F::kClkMaxSm:
      d.max_sm_clock_mhz = num();
      break;
    case F::kClkMaxMem:
      d.max_mem_clock_mhz = num();
      break;
    case F::kClkDefAppGr:
      d.default_app_graphics_clock_mhz = num();
      break;
    case F::kClkDefAppMem:
      d.default_app_mem_clock_mhz = num();
      break;
    case F::kPcieGen:
      s.pcie_gen = num();
      break;
    case F::kPcieGenMax:
      if (auto m = num(); m && (!d.pcie_max_gen || *m < *d.pcie_max_gen)) d.pcie_max_gen = m;
      break;
    case F::kPcieGenHostMax:  // the host slot caps the link: system max = min(max, hostmax)
      if (auto m = num(); m && (!d.pcie_max_gen || *m < *d.pcie_max_gen)) d.pcie_max_gen = m;
      break;
    case F::kPcieGenGpuMax:
      d.pcie_gpu_max_gen = num();
      break;
    case F::kPcieWidth:
      s.pcie_width = num();
      break;
    case F::kPcieWidthMax:
      d.pcie_max_width = num();
      break;
    case F::kFan:
      s.fan_pct = num();
      break;
    default:
      break;
  }
}

void apply_memory_ecc(F f, std::string_view v, GpuState& g) {
  GpuSample& s = g.sample;
  switch (f) {
    case F::kMemTotal:
      s.mem_total_bytes = text::parse_mem_bytes(v);
      g.info.mem_total_bytes = s.mem_total_bytes;
      break;
    case F::kMemUsed:
      s.mem_used_bytes = text::parse_mem_bytes(v);
      break;
    case F::kMemFree:
      s.mem_free_bytes = text::parse_mem_bytes(v);
      break;
    case F::kMemReserved:
      s.mem_reserved_bytes = text::parse_mem_bytes(v);
      break;
    case F::kEccCurrent:
      s.ecc_enabled = text::parse_bool(v);
      break;
    case F::kEccPending:
      s.ecc_pending_enabled = text::parse_bool(v);
      break;
    case F::kEccSbeVol:
      fill(s.ecc_sbe_volatile, parse_u64(v));
      break;
    case F::kEccDbeVol:
      fill(s.ecc_dbe_volatile, parse_u64(v));
      break;
    case F::kEccSbeAgg:
      fill(s.ecc_sbe_aggregate, parse_u64(v));
      break;
    case F::kEccDbeAgg:
      fill(s.ecc_dbe_aggregate, parse_u64(v));
      break;
    case F::kEccSbeVolTotal:
      if (auto n = parse_u64(v)) s.ecc_sbe_volatile = n;
      break;
    case F::kEccDbeVolTotal:
      if (auto n = parse_u64(v)) s.ecc_dbe_volatile = n;
      break;
    case F::kEccSbeAggTotal:
      if (auto n = parse_u64(v)) s.ecc_sbe_aggregate = n;
      break;
    case F::kEccDbeAggTotal:
      if (auto n = parse_u64(v)) s.ecc_dbe_aggregate = n;
      break;
    case F::kEccSramUncVol:
      s.ecc_sram_uncorrectable_volatile = parse_u64(v);
      break;
    case F::kEccSramUncAgg:
      s.ecc_sram_uncorrectable_aggregate = parse_u64(v);
      break;
    case F::kEccSramThreshold:
      s.ecc_sram_threshold_exceeded = text::parse_bool(v);
      break;
    case F::kRetiredSbe:
      s.retired_pages_sbe = to_unsigned(parse_u64(v));
      break;
    case F::kRetiredDbe:
      s.retired_pages_dbe = to_unsigned(parse_u64(v));
      break;
    case F::kRetiredPending:
      s.retired_pages_pending = text::parse_bool(v);
      break;
    case F::kRemapCorr:
      s.remapped_rows_correctable = to_unsigned(parse_u64(v));
      break;
    case F::kRemapUnc:
      s.remapped_rows_uncorrectable = to_unsigned(parse_u64(v));
      break;
    case F::kRemapPending:
      s.remapped_rows_pending = text::parse_bool(v);
      break;
    case F::kRemapFailure:
      s.remapped_rows_failure = text::parse_bool(v);
      break;
    default:
      break;
  }
}

void apply_mode(F f, std::string_view v, GpuState& g) {
  GpuSample& s = g.sample;
  switch (f) {
    case F::kPstate:
      s.pstate = text::parse_pstate(v);
      break;
    case F::kPersistence:
      s.persistence_mode = text::parse_bool(v);
      break;
    case F::kMigCurrent:
      s.mig_enabled = text::parse_bool(v);
      break;
    case F::kMigPending:
      s.mig_pending = text::parse_bool(v);
      break;
    case F::kRecoveryAction:
      apply_recovery_action(v, g);
      break;
    case F::kFabricState:
      s.fabric_state = parse_fabric_state(v);
      break;
    case F::kFabricStatus:
      apply_fabric_status(v, s);
      break;
    case F::kResetRequired:
      apply_reset_status("reset_status.reset_required", v, g);
      break;
    case F::kDrainReset:
      apply_reset_status("reset_status.drain_and_reset_recommended", v, g);
      break;
    case F::kComputeMode:
      if (v == "Default")
        s.compute_mode = ComputeMode::kDefault;
      else if (v == "Exclusive_Process")
        s.compute_mode = ComputeMode::kExclusiveProcess;
      else if (v == "Exclusive_Thread")
        s.compute_mode = ComputeMode::kExclusiveThread;
      else if (v == "Prohibited")
        s.compute_mode = ComputeMode::kProhibited;
      break;
    default:
      break;
  }
}

void apply_identity(F f, std::string_view v, Snapshot& snap, GpuState& g) {
  DeviceInfo& d = g.info;
  switch (f) {
    case F::kIndex:
      d.index = to_unsigned(parse_u64(v)).value_or(d.index);
      break;
    // Reused GpuStates keep their identity strings; rows of a -l log repeat them, so
    // compare before assigning (no allocation, no re-normalising per row).
    case F::kName:
      if (d.name != v) d.name.assign(v);
      break;
    case F::kUuid:
      if (d.uuid != v) d.uuid.assign(v);
      break;
    case F::kBusId:
      if (d.pci_bus_id != v && !text::iequals(d.pci_bus_id, v)) {
        if (auto id = normalize_pci_bus_id(v))
          d.pci_bus_id = std::move(*id);
        else
          d.pci_bus_id.clear();
      }
      break;
    case F::kSerial:
      if (!text::is_na(v)) d.serial = std::string(v);
      break;
    case F::kVbios:
      if (!text::is_na(v)) d.vbios_version = std::string(v);
      break;
    case F::kDriver:
      if (!text::is_na(v) && (!snap.driver_version || *snap.driver_version != v))
        snap.driver_version = std::string(v);
      break;
    case F::kHostname:
      if (!text::is_na(v) && (!snap.hostname || *snap.hostname != v))
        snap.hostname = std::string(v);
      break;
    default:
      break;
  }
}

CsvGroup group_of(F f) {
  switch (f) {
    case F::kIndex:
    case F::kName:
    case F::kBusId:
    case F::kUuid:
    case F::kSerial:
    case F::kDriver:
    case F::kVbios:
    case F::kHostname:
      return CsvGroup::kIdentity;
    case F::kTemp:
    case F::kMemTemp:
    case F::kTempTlimit:
    case F::kPowerDraw:
    case F::kPowerDrawAverage:
    case F::kPowerDrawInstant:
    case F::kPowerLimit:
    case F::kEnforcedLimit:
    case F::kDefaultLimit:
    case F::kMinLimit:
    case F::kMaxLimit:
      return CsvGroup::kPowerTemp;
    case F::kUtilGpu:
    case F::kUtilMem:
    case F::kUtilEnc:
    case F::kUtilDec:
    case F::kClkGr:
    case F::kClkSm:
    case F::kClkMem:
    case F::kClkAppGr:
    case F::kClkAppMem:
    case F::kClkMaxGr:
    case F::kClkMaxSm:
    case F::kClkMaxMem:
    case F::kClkDefAppGr:
    case F::kClkDefAppMem:
    case F::kPcieGen:
    case F::kPcieGenMax:
    case F::kPcieGenGpuMax:
    case F::kPcieGenHostMax:
    case F::kPcieWidth:
    case F::kPcieWidthMax:
    case F::kFan:
      return CsvGroup::kClocksUtil;
    case F::kMemTotal:
    case F::kMemUsed:
    case F::kMemFree:
    case F::kMemReserved:
    case F::kEccCurrent:
    case F::kEccPending:
    case F::kEccSbeVol:
    case F::kEccDbeVol:
    case F::kEccSbeAgg:
    case F::kEccDbeAgg:
    case F::kEccSbeVolTotal:
    case F::kEccDbeVolTotal:
    case F::kEccSbeAggTotal:
    case F::kEccDbeAggTotal:
    case F::kEccSramUncVol:
    case F::kEccSramUncAgg:
    case F::kEccSramThreshold:
    case F::kRetiredSbe:
    case F::kRetiredDbe:
    case F::kRetiredPending:
    case F::kRemapCorr:
    case F::kRemapUnc:
    case F::kRemapPending:
    case F::kRemapFailure:
      return CsvGroup::kMemoryEcc;
    case F::kPstate:
    case F::kPersistence:
    case F::kComputeMode:
    case F::kMigCurrent:
    case F::kMigPending:
    case F::kRecoveryAction:
    case F::kFabricState:
    case F::kFabricStatus:
    case F::kResetRequired:
    case F::kDrainReset:
      return CsvGroup::kMode;
    default:
      return CsvGroup::kNone;
  }
}

}  // namespace

CsvColumn csv_column_for(std::string_view header_field) {
  std::string_view n = text::trim(header_field);
  if (auto br = n.find(" ["); br != std::string_view::npos) n = text::trim(n.substr(0, br));
  CsvColumn col{F::kIgnore, CsvGroup::kNone, n};
  for (const auto& [name, field] : kFields)
    if (text::iequals(n, name)) return {field, group_of(field), n};
  for (std::string_view prefix : {"clocks_event_reasons.", "clocks_throttle_reasons."}) {
    if (!text::starts_with(n, prefix)) continue;
    const auto rest = n.substr(prefix.size());
    if (rest == "active")
      col.field = F::kReasonsActive;
    else if (rest != "supported")
      col.field = F::kReasonBit;
  }
  for (std::string_view prefix :
       {"clocks_event_reasons_counters.", "clocks_throttle_reasons_counters."})
    if (text::starts_with(n, prefix)) col.field = F::kReasonCounter;
  return col;
}

void apply_recovery_action(std::string_view v, GpuState& g) {
  v = text::trim(v);
  // Anything but None is the driver asking for an intervention before the GPU is usable.
  if (v.empty() || v == "None" || text::is_na(v)) return;
  g.access = GpuAccess::kResetRequired;
  std::string e = "nvidia-smi GPU recovery action: " + std::string(v);
  if (std::find(g.errors.begin(), g.errors.end(), e) == g.errors.end()) g.errors.push_back(e);
}

void apply_reset_status(std::string_view field, std::string_view v, GpuState& g) {
  const auto yes = text::parse_bool(text::trim(v));
  if (!yes || !*yes) return;
  if (g.access == GpuAccess::kOk) g.access = GpuAccess::kResetRequired;
  std::string e = "nvidia-smi " + std::string(field) + ": Yes";
  if (std::find(g.errors.begin(), g.errors.end(), e) == g.errors.end()) g.errors.push_back(e);
}

std::optional<FabricState> parse_fabric_state(std::string_view v) {
  v = text::trim(v);
  if (text::iequals(v, "Completed")) return FabricState::kCompleted;
  if (text::iequals(v, "In Progress")) return FabricState::kInProgress;
  if (text::iequals(v, "Not Started")) return FabricState::kNotStarted;
  if (text::iequals(v, "Not Supported")) return FabricState::kNotSupported;
  return std::nullopt;
}

void apply_fabric_status(std::string_view v, GpuSample& s) {
  v = text::trim(v);
  if (v.empty() || text::is_na(v)) {
    s.fabric_status.clear();
  } else if (s.fabric_status != v) {
    s.fabric_status.assign(v);
  }
}

bool note_failed_reading(std::string_view column, std::string_view value, GpuState& g) {
  const text::FailedReading f = text::failed_reading(value);
  if (f == text::FailedReading::kNone) return false;
  std::string what = std::string(column) + ": " + std::string(text::trim(value));
  if (std::find(g.failed_readings.begin(), g.failed_readings.end(), what) ==
      g.failed_readings.end())
    g.failed_readings.push_back(std::move(what));
  if (f == text::FailedReading::kLost) g.access = GpuAccess::kLost;
  if (f == text::FailedReading::kResetRequired && g.access == GpuAccess::kOk)
    g.access = GpuAccess::kResetRequired;
  return true;
}

void apply_csv_value(const CsvColumn& col, std::string_view value, Snapshot& snap, GpuState& g) {
  const std::string_view v = text::trim(value);
  switch (col.field) {
    case F::kIgnore:
    case F::kTimestamp:
      return;
    case F::kReasonsActive:
      if (auto m = text::parse_hex(v))
        g.sample.clock_reasons = g.sample.clock_reasons.value_or(0) | *m;
      return;
    case F::kReasonBit:
      if (auto on = text::parse_bool(v)) apply_clock_reason(col.name, *on, g.sample);
      return;
    case F::kReasonCounter:
      if (auto* slot = violation_slot(col.name, g.sample.violations))
        *slot = text::parse_duration_ns(v);
      return;
    default:
      break;
  }
  switch (col.group) {
    case CsvGroup::kIdentity:
      return apply_identity(col.field, v, snap, g);
    case CsvGroup::kPowerTemp:
      return apply_power_temp(col.field, v, g);
    case CsvGroup::kClocksUtil:
      return apply_clocks_util(col.field, v, g);
    case CsvGroup::kMemoryEcc:
      return apply_memory_ecc(col.field, v, g);
    case CsvGroup::kMode:
      return apply_mode(col.field, v, g);
    case CsvGroup::kNone:
      return;
  }
}

}  // namespace gw::smi
