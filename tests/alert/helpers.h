// Small builders for the alert tests: GPUs with the one reading a test is about.
#pragma once

#include <string>
#include <vector>

#include "alert/alert.h"
#include "core/clock.h"

namespace gw::alert::test {

inline constexpr uint64_t kGiB = 1024ULL * 1024 * 1024;

// A healthy H100-like GPU: 40 C (slowdown 87, max operating 85), 10 % util, Gen5 x16 of
// Gen5 x16, 1 GiB of 80 GiB, no process, no clock reasons.
inline GpuState gpu(unsigned index) {
  GpuState g;
  g.info.index = index;
  g.info.name = "NVIDIA H100 80GB HBM3";
  g.info.uuid = "GPU-0000000" + std::to_string(index) + "-aaaa-bbbb-cccc-dddddddddddd";
  g.info.pci_bus_id = "00000000:1" + std::to_string(index) + ":00.0";
  g.info.minor_number = index;
  g.info.temp_slowdown_c = 87;
  g.info.temp_max_operating_c = 85;
  g.info.pcie_max_gen = 5;
  g.info.pcie_max_width = 16;
  g.info.mem_total_bytes = 80 * kGiB;
  g.sample.temp_c = 40;
  g.sample.util_gpu_pct = 10;
  g.sample.pcie_gen = 5;
  g.sample.pcie_width = 16;
  g.sample.mem_total_bytes = 80 * kGiB;
  g.sample.mem_used_bytes = 1 * kGiB;
  g.sample.clock_reasons = 0;
  g.sample.processes = std::vector<ProcessInfo>{};
  g.sample.ecc_dbe_volatile = 0;
  g.sample.remapped_rows_pending = false;
  return g;
}

inline GpuState loaded(GpuState g) {
  g.sample.util_gpu_pct = 95;
  return g;
}

inline Snapshot snap(std::vector<GpuState> gpus, int64_t t_ms = 0) {
  Snapshot s;
  s.time_ms = t_ms;
  s.source = "test";
  s.hostname = "node7";
  s.gpus = std::move(gpus);
  return s;
}

inline std::vector<AlertRule> rules_from(std::string_view toml) {
  auto cfg = parse_alert_config(toml, "test.toml");
  if (!cfg) throw std::runtime_error(cfg.error().to_string());
  return cfg->rules;
}

inline Event xid_event(unsigned code, std::string pci) {
  Event e;
  e.kind = EventKind::kXid;
  e.code = code;
  e.pci_bus_id = std::move(pci);
  e.message = "Xid " + std::to_string(code);
  e.origin = "kmsg";
  return e;
}

// Drives an engine with a ManualClock: each step advances the clock, then evaluates.
struct Driver {
  AlertEngine engine;
  ManualClock clock{1'764'576'000'000};  // 2025-12-01T08:00:00Z
  explicit Driver(std::vector<AlertRule> rules) : engine(std::move(rules)) {}
  std::vector<AlertTransition> step(int64_t dt_ms, const Snapshot& s,
                                    const std::vector<Finding>& active = {},
                                    const std::vector<Event>& events = {}) {
    clock.advance_ms(dt_ms);
    return engine.evaluate(clock.now_ms(), s, active, events);
  }
};

}  // namespace gw::alert::test
