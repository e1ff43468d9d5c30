// DCGM's fields as data: the id, the short tag `dcgmi dmon` prints in its header (and `-l`
// lists), the name dcgm-exporter gives the series, what it means and what kind of figure it is.
// Only the fields a diagnosis uses are here; any other tag is still a reading (kept, shown, not
// judged). Tags and ids from DCGM's dcgm_fields.h / dcgm_fields.cpp (DCGM 4.x).
#pragma once

#include <string_view>

namespace gw {

enum class DcgmFieldClass {
  kFatalCount,  // any non-zero value is a fault (uncorrectable ECC, row-remap failure)
  kErrorCount,  // a non-zero value is an error worth a look (NVLink, PCIe replays)
  kCorrected,   // corrected errors: a rate matters, a handful does not
  kXid,         // the last Xid (read by the Xid rule)
  kTraffic,     // bytes or packets moved: evidence that a link carries data
  kViolation,   // time spent with clocks held down for a reason
  kReading,     // a plain reading (temperature, power, clocks, utilisation)
};

struct DcgmFieldInfo {
  int id = 0;
  std::string_view tag;       // "ESVTL"
  std::string_view exporter;  // "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL" (dcgm-exporter's series)
  std::string_view meaning;   // "volatile single-bit ECC errors"
  DcgmFieldClass cls = DcgmFieldClass::kReading;
  bool nvlink = false;  // an NVLink counter (errors or traffic)
};

// By the tag dmon prints (exact, upper case) or by the exporter's series name; nullptr when the
// table does not hold it.
const DcgmFieldInfo* dcgm_field_by_tag(std::string_view tag);
const DcgmFieldInfo* dcgm_field_by_exporter_name(std::string_view name);
const DcgmFieldInfo* dcgm_field_by_id(int id);

}  // namespace gw
