// DCGM field table (see dcgm_fields.h). Exporter names follow dcgm-exporter's CSV (a few differ
// from the header's macro: XID_ERRORS, *_COUNT_TOTAL for the NVLink error totals).
#include "core/dcgm_fields.h"

#include <array>

namespace gw {
namespace {

using C = DcgmFieldClass;

constexpr std::array kFields = {
    DcgmFieldInfo{100, "SMCLK", "DCGM_FI_DEV_SM_CLOCK", "SM clock (MHz)", C::kReading},
    DcgmFieldInfo{101, "MMCLK", "DCGM_FI_DEV_MEM_CLOCK", "memory clock (MHz)", C::kReading},
    DcgmFieldInfo{140, "MMTMP", "DCGM_FI_DEV_MEMORY_TEMP", "memory temperature (C)", C::kReading},
    DcgmFieldInfo{150, "TMPTR", "DCGM_FI_DEV_GPU_TEMP", "GPU temperature (C)", C::kReading},
    DcgmFieldInfo{155, "POWER", "DCGM_FI_DEV_POWER_USAGE", "power draw (W)", C::kReading},
    DcgmFieldInfo{156, "TOTEC", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "energy since boot (mJ)",
                  C::kReading},
    DcgmFieldInfo{202, "RPCTR", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "PCIe replays", C::kErrorCount},
    DcgmFieldInfo{203, "GPUTL", "DCGM_FI_DEV_GPU_UTIL", "GPU utilisation (%)", C::kReading},
    DcgmFieldInfo{204, "MCUTL", "DCGM_FI_DEV_MEM_COPY_UTIL", "memory copy utilisation (%)",
                  C::kReading},
    DcgmFieldInfo{230, "XIDER", "DCGM_FI_DEV_XID_ERRORS", "last Xid", C::kXid},
    DcgmFieldInfo{240, "PVIOL", "DCGM_FI_DEV_POWER_VIOLATION", "time held down by power (us)",
                  C::kViolation},
    DcgmFieldInfo{241, "TVIOL", "DCGM_FI_DEV_THERMAL_VIOLATION", "time held down by heat (us)",
                  C::kViolation},
    DcgmFieldInfo{243, "BLVIO", "DCGM_FI_DEV_BOARD_LIMIT_VIOLATION",
                  "time held down by the board limit (us)", C::kViolation},
    DcgmFieldInfo{245, "RVIOL", "DCGM_FI_DEV_RELIABILITY_VIOLATION",
                  "time held down for reliability (us)", C::kViolation},
    DcgmFieldInfo{310, "ESVTL", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
                  "corrected (single-bit) ECC errors since the driver loaded", C::kCorrected},
    DcgmFieldInfo{311, "EDVTL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                  "uncorrectable (double-bit) ECC errors since the driver loaded", C::kFatalCount},
    DcgmFieldInfo{312, "ESATL", "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL",
                  "corrected (single-bit) ECC errors over the GPU's life", C::kCorrected},
    DcgmFieldInfo{313, "EDATL", "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
                  "uncorrectable (double-bit) ECC errors over the GPU's life", C::kFatalCount},
    DcgmFieldInfo{391, "RPDBE", "DCGM_FI_DEV_RETIRED_DBE", "pages retired for double-bit errors",
                  C::kErrorCount},
    DcgmFieldInfo{392, "RPPEN", "DCGM_FI_DEV_RETIRED_PENDING", "page retirements pending a reset",
                  C::kErrorCount},
    DcgmFieldInfo{393, "URMPS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                  "rows remapped for uncorrectable errors", C::kErrorCount},
    DcgmFieldInfo{395, "RRF", "DCGM_FI_DEV_ROW_REMAP_FAILURE", "a row remap that failed",
                  C::kFatalCount},
    DcgmFieldInfo{396, "RRP", "DCGM_FI_DEV_ROW_REMAP_PENDING", "row remaps pending a reset",
                  C::kErrorCount},
    DcgmFieldInfo{409, "NFELT", "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                  "NVLink flow-control CRC errors", C::kErrorCount, true},
    DcgmFieldInfo{419, "NDELT", "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL",
                  "NVLink data CRC errors", C::kErrorCount, true},
    DcgmFieldInfo{429, "NRELT", "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "NVLink replays",
                  C::kErrorCount, true},
    DcgmFieldInfo{439, "NRCLT", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
                  "NVLink recoveries", C::kErrorCount, true},
    DcgmFieldInfo{449, "NBWLT", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "NVLink bandwidth counter",
                  C::kTraffic, true},
    DcgmFieldInfo{1009, "PCITX", "DCGM_FI_PROF_PCIE_TX_BYTES", "PCIe bytes sent per second",
                  C::kReading},
    DcgmFieldInfo{1010, "PCIRX", "DCGM_FI_PROF_PCIE_RX_BYTES", "PCIe bytes received per second",
                  C::kReading},
    DcgmFieldInfo{1011, "NVLTX", "DCGM_FI_PROF_NVLINK_TX_BYTES", "NVLink bytes sent per second",
                  C::kTraffic, true},
    DcgmFieldInfo{1012, "NVLRX", "DCGM_FI_PROF_NVLINK_RX_BYTES", "NVLink bytes received per second",
                  C::kTraffic, true},
    DcgmFieldInfo{1200, "NLXMITP", "DCGM_FI_DEV_NVLINK_COUNT_TX_PACKETS", "NVLink packets sent",
                  C::kTraffic, true},
    DcgmFieldInfo{1201, "NLXMITB", "DCGM_FI_DEV_NVLINK_COUNT_TX_BYTES", "NVLink bytes sent",
                  C::kTraffic, true},
    DcgmFieldInfo{1202, "NLRCVP", "DCGM_FI_DEV_NVLINK_COUNT_RX_PACKETS", "NVLink packets received",
                  C::kTraffic, true},
    DcgmFieldInfo{1203, "NLRCVB", "DCGM_FI_DEV_NVLINK_COUNT_RX_BYTES", "NVLink bytes received",
                  C::kTraffic, true},
    DcgmFieldInfo{1204, "NLMALP", "DCGM_FI_DEV_NVLINK_COUNT_RX_MALFORMED_PACKET_ERRORS",
                  "NVLink malformed packets", C::kErrorCount, true},
    DcgmFieldInfo{1205, "NLBUFO", "DCGM_FI_DEV_NVLINK_COUNT_RX_BUFFER_OVERRUN_ERRORS",
                  "NVLink receive buffer overruns", C::kErrorCount, true},
    DcgmFieldInfo{1206, "NLRCVE", "DCGM_FI_DEV_NVLINK_COUNT_RX_ERRORS", "NVLink receive errors",
                  C::kErrorCount, true},
    DcgmFieldInfo{1207, "NLRCVRE", "DCGM_FI_DEV_NVLINK_COUNT_RX_REMOTE_ERRORS",
                  "NVLink remote receive errors", C::kErrorCount, true},
    DcgmFieldInfo{1208, "NLRCVGE", "DCGM_FI_DEV_NVLINK_COUNT_RX_GENERAL_ERRORS",
                  "NVLink general receive errors", C::kErrorCount, true},
    DcgmFieldInfo{1209, "NLLLIE", "DCGM_FI_DEV_NVLINK_COUNT_LOCAL_LINK_INTEGRITY_ERRORS",
                  "NVLink local link integrity errors", C::kErrorCount, true},
    DcgmFieldInfo{1210, "NLXMITD", "DCGM_FI_DEV_NVLINK_COUNT_TX_DISCARDS", "NVLink send discards",
                  C::kErrorCount, true},
    DcgmFieldInfo{1211, "NLLRS", "DCGM_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_SUCCESSFUL_EVENTS",
                  "NVLink link recoveries that succeeded", C::kCorrected, true},
    DcgmFieldInfo{1212, "NLLRF", "DCGM_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_FAILED_EVENTS",
                  "NVLink link recoveries that failed", C::kErrorCount, true},
    DcgmFieldInfo{1213, "NLLR", "DCGM_FI_DEV_NVLINK_COUNT_LINK_RECOVERY_EVENTS",
                  "NVLink link recoveries", C::kCorrected, true},
    DcgmFieldInfo{1214, "NLSYME", "DCGM_FI_DEV_NVLINK_COUNT_RX_SYMBOL_ERRORS",
                  "NVLink symbol errors", C::kCorrected, true},
};

}  // namespace

const DcgmFieldInfo* dcgm_field_by_tag(std::string_view tag) {
  for (const auto& f : kFields)
    if (f.tag == tag) return &f;
  return nullptr;
}

const DcgmFieldInfo* dcgm_field_by_exporter_name(std::string_view name) {
  for (const auto& f : kFields)
    if (f.exporter == name) return &f;
  return nullptr;
}

const DcgmFieldInfo* dcgm_field_by_id(int id) {
  for (const auto& f : kFields)
    if (f.id == id) return &f;
  return nullptr;
}

}  // namespace gw
