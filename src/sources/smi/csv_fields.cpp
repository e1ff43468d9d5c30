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
using G = CsvGroup;
using text::parse_u64;
using text::to_unsigned;

// Field names as nvidia-smi --help-query-gpu spells them, with their older aliases, and the
// handler group each value goes to (decided once per column at header time).
struct FieldRow {
  std::string_view name;
  CsvField field;
  CsvGroup group;
};
constexpr FieldRow kFields[] = {
    {"timestamp", F::kTimestamp, G::kNone},
    {"index", F::kIndex, G::kIdentity},
    {"name", F::kName, G::kIdentity},
    {"gpu_name", F::kName, G::kIdentity},
    {"pci.bus_id", F::kBusId, G::kIdentity},
    {"gpu_bus_id", F::kBusId, G::kIdentity},
    {"uuid", F::kUuid, G::kIdentity},
    {"gpu_uuid", F::kUuid, G::kIdentity},
    {"serial", F::kSerial, G::kIdentity},
    {"gpu_serial", F::kSerial, G::kIdentity},
    {"driver_version", F::kDriver, G::kIdentity},
    {"vbios_version", F::kVbios, G::kIdentity},
    {"temperature.gpu", F::kTemp, G::kPowerTemp},
    {"temperature.memory", F::kMemTemp, G::kPowerTemp},
    {"temperature.gpu.tlimit", F::kTempTlimit,
     G::kPowerTemp},  // R535+: signed margin, not a reading
    {"power.draw", F::kPowerDraw, G::kPowerTemp},
    {"power.draw.average", F::kPowerDrawAverage, G::kPowerTemp},
    {"power.draw.instant", F::kPowerDrawInstant, G::kPowerTemp},
    {"power.limit", F::kPowerLimit, G::kPowerTemp},
    {"enforced.power.limit", F::kEnforcedLimit, G::kPowerTemp},
    {"power.default_limit", F::kDefaultLimit, G::kPowerTemp},
    {"power.min_limit", F::kMinLimit, G::kPowerTemp},
    {"power.max_limit", F::kMaxLimit, G::kPowerTemp},
    // The aliases --help-query-gpu gives beside them (R535+).
    {"gpu.power.draw.average", F::kPowerDrawAverage, G::kPowerTemp},
    {"gpu.power.draw.instant", F::kPowerDrawInstant, G::kPowerTemp},
    {"gpu.power.requested_limit", F::kPowerLimit, G::kPowerTemp},
    {"gpu.power.current_limit", F::kEnforcedLimit, G::kPowerTemp},
    {"gpu.power.default_limit", F::kDefaultLimit, G::kPowerTemp},
    {"gpu.power.min_limit", F::kMinLimit, G::kPowerTemp},
    {"gpu.power.max_limit", F::kMaxLimit, G::kPowerTemp},
    {"utilization.gpu", F::kUtilGpu, G::kClocksUtil},
    {"utilization.memory", F::kUtilMem, G::kClocksUtil},
    {"utilization.encoder", F::kUtilEnc, G::kClocksUtil},
    {"utilization.decoder", F::kUtilDec, G::kClocksUtil},
    {"memory.total", F::kMemTotal, G::kMemoryEcc},
    {"memory.used", F::kMemUsed, G::kMemoryEcc},
    {"memory.free", F::kMemFree, G::kMemoryEcc},
    {"memory.reserved", F::kMemReserved, G::kMemoryEcc},
    {"clocks.gr", F::kClkGr, G::kClocksUtil},
    {"clocks.current.graphics", F::kClkGr, G::kClocksUtil},
    {"clocks.sm", F::kClkSm, G::kClocksUtil},
    {"clocks.current.sm", F::kClkSm, G::kClocksUtil},
    {"clocks.mem", F::kClkMem, G::kClocksUtil},
    {"clocks.current.memory", F::kClkMem, G::kClocksUtil},
    {"clocks.applications.graphics", F::kClkAppGr, G::kClocksUtil},
    {"clocks.applications.gr", F::kClkAppGr, G::kClocksUtil},
    {"clocks.applications.memory", F::kClkAppMem, G::kClocksUtil},
    {"clocks.applications.mem", F::kClkAppMem, G::kClocksUtil},
    {"clocks.max.graphics", F::kClkMaxGr, G::kClocksUtil},
    {"clocks.max.gr", F::kClkMaxGr, G::kClocksUtil},
    {"clocks.max.sm", F::kClkMaxSm, G::kClocksUtil},
    {"clocks.max.memory", F::kClkMaxMem, G::kClocksUtil},
    {"clocks.max.mem", F::kClkMaxMem, G::kClocksUtil},
    {"clocks.default_applications.graphics", F::kClkDefAppGr, G::kClocksUtil},
    {"clocks.default_applications.memory", F::kClkDefAppMem, G::kClocksUtil},
    {"clocks.default_applications.gr", F::kClkDefAppGr, G::kClocksUtil},
    {"clocks.default_applications.mem", F::kClkDefAppMem, G::kClocksUtil},
    {"pcie.link.gen.current", F::kPcieGen, G::kClocksUtil},
    {"pcie.link.gen.max", F::kPcieGenMax, G::kClocksUtil},
    {"pcie.link.gen.gpumax", F::kPcieGenGpuMax, G::kClocksUtil},
    {"pcie.link.gen.hostmax", F::kPcieGenHostMax, G::kClocksUtil},
    {"pcie.link.width.current", F::kPcieWidth, G::kClocksUtil},
    {"pcie.link.width.max", F::kPcieWidthMax, G::kClocksUtil},
    {"pstate", F::kPstate, G::kMode},
    {"fan.speed", F::kFan, G::kClocksUtil},
    {"persistence_mode", F::kPersistence, G::kMode},
    {"compute_mode", F::kComputeMode, G::kMode},
    {"mig.mode.current", F::kMigCurrent, G::kMode},
    {"mig.mode.pending", F::kMigPending, G::kMode},
    {"ecc.mode.current", F::kEccCurrent, G::kMemoryEcc},
    {"ecc.mode.pending", F::kEccPending, G::kMemoryEcc},
    {"ecc.errors.corrected.volatile.device_memory", F::kEccSbeVol, G::kMemoryEcc},
    {"ecc.errors.corrected.volatile.dram", F::kEccSbeVol, G::kMemoryEcc},
    {"ecc.errors.uncorrected.volatile.device_memory", F::kEccDbeVol, G::kMemoryEcc},
    {"ecc.errors.uncorrected.volatile.dram", F::kEccDbeVol, G::kMemoryEcc},
    {"ecc.errors.corrected.aggregate.device_memory", F::kEccSbeAgg, G::kMemoryEcc},
    {"ecc.errors.corrected.aggregate.dram", F::kEccSbeAgg, G::kMemoryEcc},
    {"ecc.errors.uncorrected.aggregate.device_memory", F::kEccDbeAgg, G::kMemoryEcc},
    {"ecc.errors.uncorrected.aggregate.dram", F::kEccDbeAgg, G::kMemoryEcc},
    // .total is every location (DRAM, SRAM, caches, register file): what the rules and the
    // -q text mean by the counts; it wins over .device_memory/.dram whichever comes first.
    {"ecc.errors.corrected.volatile.total", F::kEccSbeVolTotal, G::kMemoryEcc},
    {"ecc.errors.uncorrected.volatile.total", F::kEccDbeVolTotal, G::kMemoryEcc},
    {"ecc.errors.corrected.aggregate.total", F::kEccSbeAggTotal, G::kMemoryEcc},
    {"ecc.errors.uncorrected.aggregate.total", F::kEccDbeAggTotal, G::kMemoryEcc},
    {"ecc.errors.uncorrected.volatile.sram", F::kEccSramUncVol, G::kMemoryEcc},
    {"ecc.errors.uncorrected.aggregate.sram", F::kEccSramUncAgg, G::kMemoryEcc},
    {"ecc.errors.uncorrected.aggregate.sram.thresholdExceeded", F::kEccSramThreshold,
     G::kMemoryEcc},
    {"retired_pages.single_bit_ecc.count", F::kRetiredSbe, G::kMemoryEcc},
    {"retired_pages.sbe", F::kRetiredSbe, G::kMemoryEcc},
    {"retired_pages.double_bit.count", F::kRetiredDbe, G::kMemoryEcc},
    {"retired_pages.dbe", F::kRetiredDbe, G::kMemoryEcc},
    {"retired_pages.pending", F::kRetiredPending, G::kMemoryEcc},
    {"remapped_rows.correctable", F::kRemapCorr, G::kMemoryEcc},
    {"remapped_rows.uncorrectable", F::kRemapUnc, G::kMemoryEcc},
    {"remapped_rows.sbe", F::kRemapCorr, G::kMemoryEcc},
    {"remapped_rows.dbe", F::kRemapUnc, G::kMemoryEcc},
    {"remapped_rows.pending", F::kRemapPending, G::kMemoryEcc},
    {"remapped_rows.failure", F::kRemapFailure, G::kMemoryEcc},
    {"gpu_recovery_action", F::kRecoveryAction, G::kMode},
    {"fabric.state", F::kFabricState, G::kMode},
    {"fabric.status", F::kFabricStatus, G::kMode},
    {"reset_status.reset_required", F::kResetRequired, G::kMode},
    {"reset_status.drain_and_reset_recommended", F::kDrainReset, G::kMode},
    {"hostname", F::kHostname, G::kIdentity},
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

}  // namespace

CsvColumn csv_column_for(std::string_view header_field) {
  std::string_view n = text::trim(header_field);
  if (auto br = n.find(" ["); br != std::string_view::npos) n = text::trim(n.substr(0, br));
  CsvColumn col{F::kIgnore, CsvGroup::kNone, n};
  for (const FieldRow& row : kFields)
    if (text::iequals(n, row.name)) return {row.field, row.group, n};
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
  if (text::starts_with(n, "fabric.health.")) col.field = F::kFabricHealth;
  return col;
}

namespace {

// Read, not judged: each entry a field name, or a prefix when it ends with '.'.
struct NotJudged {
  std::string_view field;
  std::string_view why;
};
constexpr std::string_view kIdentity = "identity or layout, not a health reading";
constexpr std::string_view kBreakdown = "a per-location breakdown; the totals are read";
constexpr std::string_view kSetting = "a setting with no bearing on health or speed";
constexpr NotJudged kNotJudged[] = {
    {"count", kIdentity},
    {"pci.domain", kIdentity},
    {"pci.bus", kIdentity},
    {"pci.device", kIdentity},
    {"pci.baseClass", kIdentity},
    {"pci.subClass", kIdentity},
    {"pci.device_id", kIdentity},
    {"pci.sub_device_id", kIdentity},
    {"platform.", kIdentity},
    {"inforom.", kIdentity},
    {"compute_cap", kIdentity},
    {"addressing_mode", kIdentity},
    {"fabric.cliqueId", kIdentity},
    {"fabric.clusterUuid", kIdentity},
    {"clocks_event_reasons.supported", "the reasons the GPU can report; the active ones are read"},
    {"clocks_throttle_reasons.supported",
     "the reasons the GPU can report; the active ones are read"},
    {"pcie.link.gen.gpucurrent", "the GPU's side of pcie.link.gen.current, which is read"},
    {"vgpu_driver_capability.", kSetting},
    {"vgpu_device_capability.", kSetting},
    {"display_mode", kSetting},
    {"display_attached", kSetting},
    {"display_active", kSetting},
    {"accounting.", kSetting},
    {"driver_model.", kSetting},
    {"gom.", kSetting},
    {"gpu_operation_mode.", kSetting},
    {"gsp.mode.", kSetting},
    {"c2c.mode", kSetting},
    {"dramEncryption.", kSetting},
    {"power.management", kSetting},
    {"power_smoothing.", kSetting},
    {"protected_memory.", "confidential computing's memory; memory.* is read"},
    {"module.", "the Grace Hopper module's power; the GPU's own power.* is read"},
    {"utilization.jpeg", "a media engine; training load shows in utilization.gpu"},
    {"utilization.ofa", "a media engine; training load shows in utilization.gpu"},
    {"encoder.stats.", "a media engine; training load shows in utilization.gpu"},
    {"clocks.current.video", "a media engine clock; the SM and memory clocks are read"},
    {"clocks.video", "a media engine clock; the SM and memory clocks are read"},
    {"ecc.errors.corrected.volatile.", kBreakdown},
    {"ecc.errors.corrected.aggregate.", kBreakdown},
    {"ecc.errors.uncorrected.volatile.", kBreakdown},
    {"ecc.errors.uncorrected.aggregate.", kBreakdown},
    {"remapped_rows.correctable_inactive", kBreakdown},
    {"remapped_rows.uncorrectable_inactive", kBreakdown},
    {"remapped_rows.histogram.",
     "bank availability; the remap counts, pending and failure are read"},
};

}  // namespace

std::optional<std::string_view> csv_field_not_judged(std::string_view name) {
  if (csv_column_for(name).field != F::kIgnore) return std::nullopt;  // a total among breakdowns
  for (const NotJudged& n : kNotJudged)
    if (n.field.back() == '.' ? text::starts_with(name, n.field) : name == n.field) return n.why;
  return std::nullopt;
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

namespace {

char fold(char c) {
  if (c == '_') return ' ';
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// "route_unhealthy" and "Route Unhealthy" alike.
bool field_is(std::string_view field, std::string_view want) {
  if (field.size() != want.size()) return false;
  for (size_t i = 0; i < field.size(); ++i)
    if (fold(field[i]) != fold(want[i])) return false;
  return true;
}

// nvidia-smi's fabric health fields: a word that reads fine (anything else is named with
// `label`), a Yes/No flag that is set when something is wrong, or a field that says nothing
// about health. One table for the "is a health field" test and the judgement.
enum class HealthKind : uint8_t { kWord, kFlag, kInfo };
struct HealthField {
  std::string_view name;
  HealthKind kind;
  std::string_view fine;   // kWord: the value that reads fine
  std::string_view label;  // kWord: what precedes any other value in the report
};
constexpr std::array<HealthField, 7> kHealthFields{{
    {"Summary", HealthKind::kWord, "Healthy", "Summary "},   // Unhealthy, Limited Capacity
    {"Bandwidth", HealthKind::kWord, "Full", "Bandwidth "},  // Degraded
    {"Incorrect Configuration", HealthKind::kWord, "None", "Incorrect Configuration: "},
    {"Route Recovery in progress", HealthKind::kFlag, "", ""},
    {"Route Unhealthy", HealthKind::kFlag, "", ""},
    {"Access Timeout Recovery", HealthKind::kFlag, "", ""},
    {"Partition Assigned", HealthKind::kInfo, "", ""},
}};

// What a health field flags, in nvidia-smi's words, or "" when it reads fine; nullopt when the
// value says nothing (N/A) or the field says nothing about health.
std::optional<std::string> fabric_health_issue(const HealthField& f, std::string_view v) {
  if (v.empty() || text::is_na(v) || text::iequals(v, "Not Supported")) return std::nullopt;
  switch (f.kind) {
    case HealthKind::kWord:
      if (text::iequals(v, f.fine)) return std::string();
      return std::string(f.label) + std::string(v);
    case HealthKind::kFlag: {
      const auto on = text::parse_bool(v);
      if (!on) return std::nullopt;
      return *on ? std::string(f.name) : std::string();
    }
    case HealthKind::kInfo:
      break;
  }
  return std::nullopt;
}

}  // namespace

bool apply_fabric_health(std::string_view field, std::string_view value, GpuSample& s) {
  field = text::trim(field);
  const auto f = std::find_if(kHealthFields.begin(), kHealthFields.end(),
                              [&](const HealthField& h) { return field_is(field, h.name); });
  if (f == kHealthFields.end()) return false;
  const auto issue = fabric_health_issue(*f, text::trim(value));
  if (!issue) return true;
  if (issue->empty()) {
    if (!s.fabric_healthy) s.fabric_healthy = true;
    return true;
  }
  s.fabric_healthy = false;
  if (s.fabric_health.find(*issue) == std::string::npos)
    s.fabric_health += (s.fabric_health.empty() ? "" : "; ") + *issue;
  return true;
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
    case F::kFabricHealth:
      apply_fabric_health(col.name.substr(14), v, g.sample);  // after "fabric.health."
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
