// The --query-gpu field names we understand, and how a value lands in the model.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/snapshot.h"

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

// Puts one (trimmed or not) value into the snapshot/GPU; N/A-style values leave nullopt.
void apply_csv_value(const CsvColumn& col, std::string_view value, Snapshot& snap, GpuState& gpu);

}  // namespace gw::smi
