// The --query-gpu field names we understand, and how a value lands in the model.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/snapshot.h"
#include "sources/smi/text_util.h"

namespace gw::smi {

enum class CsvField : uint8_t {
  kIgnore,
  kTimestamp,
  kIndex,
  kName,
  kBusId,
  kUuid,
  kSerial,
  kDriver,
  kVbios,
  kTemp,
  kMemTemp,
  kTempTlimit,
  kTempShutdown,
  kTempSlowdown,
  kTempMaxOperating,
  kPowerDraw,
  kPowerDrawAverage,
  kPowerDrawInstant,
  kPowerLimit,
  kEnforcedLimit,
  kDefaultLimit,
  kMinLimit,
  kMaxLimit,
  kUtilGpu,
  kUtilMem,
  kUtilEnc,
  kUtilDec,
  kMemTotal,
  kMemUsed,
  kMemFree,
  kMemReserved,
  kClkGr,
  kClkSm,
  kClkMem,
  kClkAppGr,
  kClkAppMem,
  kClkMaxGr,
  kClkMaxSm,
  kClkMaxMem,
  kClkDefAppGr,
  kClkDefAppMem,
  kReasonsActive,
  kReasonBit,
  kReasonCounter,
  kPcieGen,
  kPcieGenMax,
  kPcieGenGpuMax,
  kPcieGenHostMax,
  kPcieWidth,
  kPcieWidthMax,
  kPstate,
  kFan,
  kPersistence,
  kComputeMode,
  kMigCurrent,
  kMigPending,
  kEccCurrent,
  kEccPending,
  kEccSbeVol,
  kEccDbeVol,
  kEccSbeAgg,
  kEccDbeAgg,
  kEccSbeVolTotal,
  kEccDbeVolTotal,
  kEccSbeAggTotal,
  kEccDbeAggTotal,
  kEccSramUncVol,
  kEccSramUncAgg,
  kEccSramThreshold,
  kRetiredSbe,
  kRetiredDbe,
  kRetiredPending,
  kRemapCorr,
  kRemapUnc,
  kRemapPending,
  kRemapFailure,
  kRecoveryAction,  // gpu_recovery_action: None, Reset, Reboot, Drain P2P, Drain and Reset
  kFabricState,     // fabric.state: Not Supported, Not Started, In Progress, Completed
  kFabricStatus,    // fabric.status: Success, or the registration's error
  kResetRequired,   // reset_status.reset_required: Yes / No
  kDrainReset,      // reset_status.drain_and_reset_recommended: Yes / No
  kFabricHealth,    // fabric.health.*: the fabric's health fields (-q "Fabric > Health")
  kHostname,
};

// Which handler a field goes to, decided once per column at header time.
enum class CsvGroup : uint8_t { kNone, kIdentity, kPowerTemp, kClocksUtil, kMemoryEcc, kMode };

struct CsvColumn {
  CsvField field = CsvField::kIgnore;
  CsvGroup group = CsvGroup::kNone;
  std::string_view name;  // header name without unit (for reason bits / counters)
};

// "memory.used [MiB]" -> kMemUsed. Unknown names -> kIgnore.
CsvColumn csv_column_for(std::string_view header_field);

// Fields of `--help-query-gpu` read but not judged (identity, layout, per-location breakdowns of
// totals that are read, power smoothing, ...): why, or nullopt for a field not in that table.
// Every field of the list is either a column above or one of these (tests/parsers).
std::optional<std::string_view> csv_field_not_judged(std::string_view name);

// Puts one (trimmed or not) value into the snapshot/GPU; N/A-style values leave nullopt.
void apply_csv_value(const CsvColumn& col, std::string_view value, Snapshot& snap, GpuState& gpu);

// nvidia-smi's GPU recovery action (R550+: `gpu_recovery_action`, -q "GPU Recovery Action"):
// anything but None sets the GPU's access to reset-required, the action in its errors.
void apply_recovery_action(std::string_view value, GpuState& gpu);
// nvidia-smi's GPU reset status (-q "GPU Reset Status", XML <gpu_reset_status>, CSV
// reset_status.*): Yes sets the GPU's access to reset-required with the field in its errors.
// `field` is the name as the input spells it.
void apply_reset_status(std::string_view field, std::string_view value, GpuState& gpu);
// The fabric State and Status as nvidia-smi prints them (-q "Fabric", XML <fabric>, CSV
// fabric.*); N/A and unknown words leave them unset.
std::optional<FabricState> parse_fabric_state(std::string_view value);
void apply_fabric_status(std::string_view value, GpuSample& sample);
// One field of the fabric's health (-q "Fabric > Health", XML <fabric><health>): `field` as the
// input spells it ("Route Unhealthy", "route_unhealthy"). A flagged condition sets
// fabric_healthy false and is added to fabric_health; a field that reads fine sets it true
// unless something was flagged; N/A and unknown fields leave both. False: not a health field.
bool apply_fabric_health(std::string_view field, std::string_view value, GpuSample& sample);

// A value the tool printed a failure for ("[Unknown Error]", "[GPU requires reset]", "ERR!"):
// noted on the GPU under the column's name (and its access set for reset / lost). False when
// the value is no failure.
bool note_failed_reading(std::string_view column, std::string_view value, GpuState& gpu);
// Cheap pre-check for the hot path: could this field be a failure at all?
// It skips what text::trim skips (a tab too: fuzz_smi_csv found "\tERR!" let through).
inline bool may_be_failed_reading(std::string_view v) {
  size_t i = v.size() > 1 && v[0] == ' ' ? 1 : 0;  // nvidia-smi's one space after a comma
  while (i < v.size() && text::is_space(v[i])) ++i;
  if (i >= v.size()) return false;
  const char c = v[i];
  return c == '[' || c == 'E' || c == 'U' || c == 'G';
}

}  // namespace gw::smi
