#include "store/metrics.h"

#include <array>
#include <string>

namespace gw::store {
namespace {

template <class T>
std::optional<double> d(const std::optional<T>& v) {
  return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

// Fixed order: the index is stored in rollup rows.
constexpr std::array<MetricDef, 28> kMetrics = {{
    {"temp_c", "GPU temperature (C)", [](const GpuSample& s) { return d(s.temp_c); }},
    {"mem_temp_c", "memory temperature (C)", [](const GpuSample& s) { return d(s.mem_temp_c); }},
    {"power_w", "power draw (W)",
     [](const GpuSample& s) {
       return s.power_mw ? std::optional<double>(*s.power_mw / 1000.0) : std::nullopt;
     }},
    {"energy_mj", "energy since driver load (mJ)",
     [](const GpuSample& s) { return d(s.energy_mj); }},
    {"sm_clock_mhz", "SM clock (MHz)", [](const GpuSample& s) { return d(s.sm_clock_mhz); }},
    {"mem_clock_mhz", "memory clock (MHz)", [](const GpuSample& s) { return d(s.mem_clock_mhz); }},
    {"util_gpu_pct", "GPU utilization (%)", [](const GpuSample& s) { return d(s.util_gpu_pct); }},
    {"util_mem_pct", "memory controller utilization (%)",
     [](const GpuSample& s) { return d(s.util_mem_pct); }},
    {"util_enc_pct", "encoder utilization (%)",
     [](const GpuSample& s) { return d(s.util_enc_pct); }},
    {"util_dec_pct", "decoder utilization (%)",
     [](const GpuSample& s) { return d(s.util_dec_pct); }},
    {"fan_pct", "fan speed (%)", [](const GpuSample& s) { return d(s.fan_pct); }},
    {"mem_used_bytes", "VRAM used (bytes)", [](const GpuSample& s) { return d(s.mem_used_bytes); }},
    {"mem_free_bytes", "VRAM free (bytes)", [](const GpuSample& s) { return d(s.mem_free_bytes); }},
    {"mem_reserved_bytes", "VRAM reserved by the driver (bytes)",
     [](const GpuSample& s) { return d(s.mem_reserved_bytes); }},
    {"pcie_gen", "current PCIe generation", [](const GpuSample& s) { return d(s.pcie_gen); }},
    {"pcie_width", "current PCIe width (lanes)",
     [](const GpuSample& s) { return d(s.pcie_width); }},
    {"pcie_tx_kb_s", "PCIe TX (KB/s)", [](const GpuSample& s) { return d(s.pcie_tx_kb_s); }},
    {"pcie_rx_kb_s", "PCIe RX (KB/s)", [](const GpuSample& s) { return d(s.pcie_rx_kb_s); }},
    {"pcie_replays", "PCIe replay counter", [](const GpuSample& s) { return d(s.pcie_replays); }},
    {"clock_reasons", "clock event reason bits",
     [](const GpuSample& s) { return d(s.clock_reasons); }},
    {"power_violation_ns", "time held back by the power limit (ns, cumulative)",
     [](const GpuSample& s) { return d(s.violations.power_ns); }},
    {"thermal_violation_ns", "time held back by thermal limits (ns, cumulative)",
     [](const GpuSample& s) { return d(s.violations.thermal_ns); }},
    {"ecc_sbe_volatile", "single-bit ECC errors since boot",
     [](const GpuSample& s) { return d(s.ecc_sbe_volatile); }},
    {"ecc_dbe_volatile", "double-bit ECC errors since boot",
     [](const GpuSample& s) { return d(s.ecc_dbe_volatile); }},
    {"remapped_rows_correctable", "rows remapped for correctable errors",
     [](const GpuSample& s) { return d(s.remapped_rows_correctable); }},
    {"remapped_rows_uncorrectable", "rows remapped for uncorrectable errors",
     [](const GpuSample& s) { return d(s.remapped_rows_uncorrectable); }},
    {"pstate", "performance state (0 = max)", [](const GpuSample& s) { return d(s.pstate); }},
    {"process_count", "processes on the GPU",
     [](const GpuSample& s) {
       return s.processes ? std::optional<double>(static_cast<double>(s.processes->size()))
                          : std::nullopt;
     }},
}};

}  // namespace

std::span<const MetricDef> metric_table() {
  return kMetrics;
}

std::optional<size_t> metric_index(std::string_view name) {
  for (size_t i = 0; i < kMetrics.size(); ++i)
    if (kMetrics[i].name == name) return i;
  return std::nullopt;
}

std::string metric_names_text() {
  std::string out;
  for (const MetricDef& m : kMetrics) {
    if (!out.empty()) out += ", ";
    out += m.name;
  }
  return out;
}

}  // namespace gw::store
