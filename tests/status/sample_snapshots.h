// Hand-built snapshots shared by the status tests: a healthy busy GPU, a throttled one, a lost
// one, and one that knows almost nothing.
#pragma once

#include "core/snapshot.h"

namespace gw::test {

inline constexpr uint64_t kGiB = 1024ULL * 1024 * 1024;

// A busy H100 with every field known.
inline GpuState busy_h100(unsigned index) {
  GpuState g;
  g.info.index = index;
  g.info.name = "NVIDIA H100 80GB HBM3";
  g.info.uuid = "GPU-0b11d014-0000-4000-8000-00000000000" + std::to_string(index);
  g.info.serial = "1650123456789";
  g.info.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  g.info.minor_number = index;
  g.info.architecture = "Hopper";
  g.info.vbios_version = "96.00.99.00.01";
  g.info.mem_total_bytes = 80 * kGiB;
  g.info.temp_slowdown_c = 89;
  g.info.temp_shutdown_c = 92;
  g.info.temp_max_operating_c = 87;
  g.info.temp_mem_max_c = 95;
  g.info.power_default_limit_mw = 700000;
  g.info.power_min_limit_mw = 200000;
  g.info.power_max_limit_mw = 700000;
  g.info.max_sm_clock_mhz = 1980;
  g.info.max_graphics_clock_mhz = 1980;
  g.info.max_mem_clock_mhz = 2619;
  g.info.default_app_graphics_clock_mhz = 1755;
  g.info.default_app_mem_clock_mhz = 2619;
  g.info.pcie_max_gen = 5;
  g.info.pcie_gpu_max_gen = 5;
  g.info.pcie_max_width = 16;
  for (auto c : {Capability::kTemperature, Capability::kPower, Capability::kClockReasons,
                 Capability::kPcieLink, Capability::kEcc, Capability::kNvLink}) {
    g.info.caps.set(c);
  }

  auto& s = g.sample;
  s.temp_c = 71;
  s.mem_temp_c = 78;
  s.fan_pct = std::nullopt;  // SXM: no fan
  s.power_mw = 612345;
  s.power_limit_mw = 700000;
  s.energy_mj = 98765432109ULL;
  s.sm_clock_mhz = 1755;
  s.graphics_clock_mhz = 1755;
  s.mem_clock_mhz = 2619;
  s.app_graphics_clock_mhz = 1755;
  s.app_mem_clock_mhz = 2619;
  s.clock_reasons = clock_reason::kSwPowerCap;
  s.violations.power_ns = 123456789012ULL;
  s.violations.thermal_ns = 0;
  s.violations.hw_power_brake_ns = 42;
  s.util_gpu_pct = 98;
  s.util_mem_pct = 45;
  s.util_enc_pct = 0;
  s.util_dec_pct = 0;
  s.mem_total_bytes = 80 * kGiB;
  s.mem_used_bytes = 60 * kGiB;
  s.mem_free_bytes = 20 * kGiB;
  s.mem_reserved_bytes = 516ULL * 1024 * 1024;
  s.pcie_gen = 5;
  s.pcie_width = 16;
  s.pcie_tx_kb_s = 1200000;
  s.pcie_rx_kb_s = 3400000;
  s.pcie_replays = 0;
  s.ecc_enabled = true;
  s.ecc_pending_enabled = true;
  s.ecc_sbe_volatile = 0;
  s.ecc_dbe_volatile = 0;
  s.ecc_sbe_aggregate = 3;
  s.ecc_dbe_aggregate = 0;
  s.ecc_sram_uncorrectable_volatile = 0;
  s.ecc_sram_uncorrectable_aggregate = 0;
  s.ecc_sram_threshold_exceeded = false;
  s.remapped_rows_correctable = 0;
  s.remapped_rows_uncorrectable = 0;
  s.remapped_rows_pending = false;
  s.remapped_rows_failure = false;
  s.pstate = 0;
  s.persistence_mode = true;
  s.compute_mode = ComputeMode::kExclusiveProcess;
  s.mig_enabled = false;
  s.mig_pending = false;
  s.processes = std::vector<ProcessInfo>{
      {4242, 60 * kGiB, std::string("python3"), false},
      {4343, std::nullopt, std::nullopt, true},
  };
  NvLinkInfo link;
  link.link = 0;
  link.active = true;
  link.version = 4;
  link.replay_errors = 0;
  link.crc_flit_errors = 7;
  s.nvlinks.push_back(link);
  return g;
}

inline GpuState lost_gpu(unsigned index) {
  GpuState g;
  g.info.index = index;
  g.info.name = "NVIDIA H100 80GB HBM3";
  g.info.uuid = "GPU-dead0000-0000-4000-8000-000000000000";
  g.info.pci_bus_id = "00000000:9A:00.0";
  g.access = GpuAccess::kLost;
  g.errors.push_back("nvmlDeviceGetTemperature: GPU is lost");
  return g;
}

// A GPU whose source could read nothing beyond its identity.
inline GpuState bare_gpu(unsigned index) {
  GpuState g;
  g.info.index = index;
  g.info.name = "Tesla T4";
  g.info.uuid = "GPU-11111111-2222-3333-4444-555555555555";
  g.info.pci_bus_id = "00000000:3B:00.0";
  return g;
}

inline Snapshot rich_snapshot() {
  Snapshot snap;
  snap.time_ms = 1796000000123;
  snap.source = "nvml";
  snap.hostname = "gpu-node-07";
  snap.driver_version = "550.54.15";
  snap.nvml_version = "12.550.54.15";
  snap.cuda_driver_version = 12040;
  snap.gpus.push_back(busy_h100(0));
  auto hot = busy_h100(1);
  hot.sample.temp_c = 90;
  hot.sample.clock_reasons = clock_reason::kHwThermalSlowdown | clock_reason::kSwThermalSlowdown |
                             clock_reason::kGpuIdle | 0x400;
  hot.errors.push_back("nvmlDeviceGetFanSpeed: not supported");
  snap.gpus.push_back(hot);
  snap.gpus.push_back(lost_gpu(2));
  snap.gpus.push_back(bare_gpu(3));
  return snap;
}

}  // namespace gw::test
