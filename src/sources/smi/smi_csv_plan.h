// How the fast CSV row path handles each column, decided once from the header.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/snapshot.h"
#include "sources/smi/csv_fields.h"

namespace gw::smi {

enum class FastOp : uint8_t {
  kSkip,      // ignored column or timestamp (handled per row)
  kGeneric,   // apply_csv_value (identity columns, anything unusual)
  kUnsigned,  // digits -> optional<unsigned> slot
  kU64,       // digits -> optional<uint64_t> slot
  kInt,       // signed digits -> optional<int> slot
  kWatts,     // "78.32 W" -> optional<uint32_t> mW slot
  kMem,       // "1024 MiB" -> optional<uint64_t> bytes slot
  kMemTotal,  // kMem, also copied into DeviceInfo
  kHex,       // "0x..." -> clock_reasons
  kPstate,    // "P0" -> pstate
  kBool,      // Yes/No, Enabled/Disabled ... -> optional<bool> slot
  kIndex,     // DeviceInfo::index
  kName,      // DeviceInfo::name, assigned only when it changes
  kUuid,      // DeviceInfo::uuid, likewise
  kBusId,     // DeviceInfo::pci_bus_id: compared as is, normalised only when it changes
};

struct FastColumn {
  FastOp op = FastOp::kSkip;
  std::optional<unsigned> GpuSample::*u = nullptr;
  std::optional<uint64_t> GpuSample::*u64 = nullptr;
  std::optional<int> GpuSample::*i = nullptr;
  std::optional<uint32_t> GpuSample::*w = nullptr;
  std::optional<bool> GpuSample::*b = nullptr;
};

struct CsvPlan {
  std::vector<FastColumn> cols;
  // True when every column either writes its own GpuSample slot with plain assignment or
  // does not depend on a reset (identity, timestamp): then a reused GpuState needs no reset
  // per row, since each row overwrites exactly the slots the header names.
  bool lean = false;
};

CsvPlan make_csv_plan(const std::vector<CsvColumn>& cols);

}  // namespace gw::smi
