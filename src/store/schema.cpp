// The schema, as migration steps. Never edit a shipped step: append one. The metric columns
// of `samples` follow store/metrics.cpp (NUMERIC affinity stores integral readings as
// compact integers).
#include <array>

#include "store/store.h"

namespace gw::store {
namespace {

constexpr const char* kV1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE gpus(
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  gpu_index INTEGER NOT NULL,
  name TEXT NOT NULL,
  pci_bus_id TEXT NOT NULL);
CREATE TABLE samples(
  gpu_id INTEGER NOT NULL,
  t_ms INTEGER NOT NULL,
  access INTEGER NOT NULL,
  temp_c NUMERIC, mem_temp_c NUMERIC, power_w NUMERIC, energy_mj NUMERIC,
  sm_clock_mhz NUMERIC, mem_clock_mhz NUMERIC,
  util_gpu_pct NUMERIC, util_mem_pct NUMERIC, util_enc_pct NUMERIC, util_dec_pct NUMERIC,
  fan_pct NUMERIC, mem_used_bytes NUMERIC, mem_free_bytes NUMERIC, mem_reserved_bytes NUMERIC,
  pcie_gen NUMERIC, pcie_width NUMERIC, pcie_tx_kb_s NUMERIC, pcie_rx_kb_s NUMERIC,
  pcie_replays NUMERIC, clock_reasons NUMERIC, power_violation_ns NUMERIC,
  thermal_violation_ns NUMERIC, ecc_sbe_volatile NUMERIC, ecc_dbe_volatile NUMERIC,
  remapped_rows_correctable NUMERIC, remapped_rows_uncorrectable NUMERIC, pstate NUMERIC,
  process_count NUMERIC,
  PRIMARY KEY(gpu_id, t_ms)) WITHOUT ROWID;
CREATE INDEX samples_t ON samples(t_ms);
CREATE TABLE rollup_1m(
  gpu_id INTEGER NOT NULL,
  metric INTEGER NOT NULL,
  t_min INTEGER NOT NULL,
  n INTEGER NOT NULL,
  vmin NUMERIC NOT NULL, vavg NUMERIC NOT NULL, vmax NUMERIC NOT NULL,
  PRIMARY KEY(gpu_id, metric, t_min)) WITHOUT ROWID;
CREATE INDEX rollup_t ON rollup_1m(t_min);
)sql";

constexpr const char* kV2 = R"sql(
CREATE TABLE events(
  id INTEGER PRIMARY KEY,
  t_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  gpu_index INTEGER,
  pci_bus_id TEXT,
  code INTEGER,
  message TEXT NOT NULL,
  origin TEXT NOT NULL);
CREATE INDEX events_t ON events(t_ms);
CREATE TABLE findings(
  id INTEGER PRIMARY KEY,
  code TEXT NOT NULL,
  severity TEXT NOT NULL,
  gpu_index INTEGER,
  pci_bus_id TEXT,
  title TEXT NOT NULL,
  evidence TEXT NOT NULL,
  remedy TEXT NOT NULL,
  raised_ms INTEGER NOT NULL,
  last_active_ms INTEGER NOT NULL,
  cleared_ms INTEGER);
CREATE INDEX findings_raised ON findings(raised_ms);
CREATE TABLE alert_transitions(
  id INTEGER PRIMARY KEY,
  t_ms INTEGER NOT NULL,
  rule TEXT NOT NULL,
  state TEXT NOT NULL,
  severity TEXT NOT NULL,
  gpu_index INTEGER,
  labels TEXT NOT NULL,
  summary TEXT NOT NULL);
CREATE INDEX alert_transitions_t ON alert_transitions(t_ms);
)sql";

constexpr std::array<const char*, kSchemaVersion> kSteps = {kV1, kV2};

}  // namespace

std::span<const char* const> schema_migrations() {
  return kSteps;
}

}  // namespace gw::store
