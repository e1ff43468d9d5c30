#include "builders.h"

#include <algorithm>

namespace gw::test {

GpuState idle_gpu(unsigned index) {
  GpuState st;
  DeviceInfo& d = st.info;
  d.index = index;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.uuid = "GPU-test-" + std::to_string(index);
  d.pci_bus_id = *normalize_pci_bus_id("0000:" + std::to_string(10 + index) + ":00.0");
  d.mem_total_bytes = 80 * kGiB;
  d.temp_slowdown_c = 90;
  d.temp_shutdown_c = 95;
  d.temp_max_operating_c = 85;
  d.temp_mem_max_c = 95;
  d.power_default_limit_mw = 400'000;
  d.max_sm_clock_mhz = 1980;
  d.max_graphics_clock_mhz = 1980;
  d.pcie_max_gen = 4;
  d.pcie_gpu_max_gen = 4;
  d.pcie_max_width = 16;
  GpuSample& s = st.sample;
  s.temp_c = 35;
  s.mem_temp_c = 40;
  s.fan_pct = 30;
  s.power_mw = 60'000;
  s.power_limit_mw = 400'000;
  s.sm_clock_mhz = 210;
  s.graphics_clock_mhz = 210;
  s.clock_reasons = clock_reason::kGpuIdle;
  s.util_gpu_pct = 0;
  s.util_mem_pct = 0;
  s.util_enc_pct = 0;
  s.util_dec_pct = 0;
  s.mem_total_bytes = 80 * kGiB;
  s.mem_used_bytes = 1 * kGiB;
  s.pcie_gen = 1;
  s.pcie_width = 16;
  s.pcie_replays = 0;
  s.ecc_enabled = true;
  s.ecc_dbe_volatile = 0;
  s.ecc_sbe_volatile = 0;
  s.remapped_rows_pending = false;
  s.remapped_rows_failure = false;
  s.pstate = 8;
  s.persistence_mode = true;
  s.compute_mode = ComputeMode::kDefault;
  s.mig_enabled = false;
  s.processes = std::vector<ProcessInfo>{};
  return st;
}

GpuState busy_gpu(unsigned index) {
  GpuState st = idle_gpu(index);
  GpuSample& s = st.sample;
  s.temp_c = 65;
  s.util_gpu_pct = 95;
  s.util_mem_pct = 40;
  s.pstate = 0;
  s.sm_clock_mhz = 1900;
  s.graphics_clock_mhz = 1900;
  s.pcie_gen = 4;
  s.power_mw = 300'000;
  s.clock_reasons = 0;
  s.mem_used_bytes = 40 * kGiB;
  s.processes = std::vector<ProcessInfo>{{1234, 40 * kGiB, "python", false}};
  return st;
}

Observation snapshot(std::vector<GpuState> gpus) {
  Observation obs;
  Snapshot s;
  s.time_ms = 1'700'000'000'000;
  s.source = "test";
  s.driver_version = "550.54.15";
  s.gpus = std::move(gpus);
  obs.samples.push_back(std::move(s));
  return obs;
}

Event xid(unsigned code, std::string pci, std::string message, int64_t time_ms) {
  Event e;
  e.kind = EventKind::kXid;
  e.code = code;
  e.pci_bus_id = std::move(pci);  // raw, as a parser might leave it ("PCI:0000:19:00")
  e.message = std::move(message);
  if (time_ms != 0) e.time_ms = time_ms;
  e.origin = "test.log:1";
  return e;
}

std::optional<Finding> find(const std::vector<Finding>& f, std::string_view code,
                            std::optional<unsigned> gpu) {
  for (const Finding& x : f) {
    if (x.code == code && (!gpu || x.gpu == gpu)) return x;
  }
  return std::nullopt;
}

size_t count(const std::vector<Finding>& f, std::string_view code) {
  return static_cast<size_t>(
      std::count_if(f.begin(), f.end(), [code](const Finding& x) { return x.code == code; }));
}

std::string evidence(const Finding& f) {
  std::string out;
  for (const auto& e : f.evidence) out += e + "\n";
  return out;
}

}  // namespace gw::test
