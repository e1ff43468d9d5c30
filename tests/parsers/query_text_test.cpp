// nvidia-smi -q text parser against the real captures and their expected.md.
#include <gtest/gtest.h>

#include "fixture_util.h"
#include "sources/smi/smi_parsers.h"

namespace gw {
namespace {

using test::gpu_by_bus;
using test::kMiB;
using test::read_fixture;

Snapshot parse_text(const std::string& id) {
  auto r = parse_smi_query_text(read_fixture(id, "input.txt"), id);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? r.value() : Snapshot{};
}

TEST(QueryText, A10RemappedRowsPending001) {
  const Snapshot s = parse_text("001-a10-remapped-rows-pending");
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuState& g = s.gpus[0];
  EXPECT_EQ(g.info.name, "NVIDIA A10");
  EXPECT_EQ(g.info.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(g.sample.remapped_rows_uncorrectable, 4u);
  EXPECT_EQ(g.sample.remapped_rows_correctable, 0u);
  EXPECT_EQ(g.sample.remapped_rows_pending, true);
  EXPECT_EQ(g.sample.remapped_rows_failure, false);
  EXPECT_EQ(g.sample.ecc_dbe_volatile, 0u);
  EXPECT_EQ(g.sample.ecc_enabled, true);
  EXPECT_EQ(g.sample.temp_c, 33);
  EXPECT_EQ(g.sample.power_mw, 43890u);
  EXPECT_EQ(g.sample.power_limit_mw, 150000u);
  EXPECT_EQ(g.info.power_min_limit_mw, 100000u);
  EXPECT_EQ(g.sample.clock_reasons, clock_reason::kGpuIdle);
  EXPECT_EQ(g.sample.pcie_gen, 4u);
  EXPECT_EQ(g.info.pcie_max_gen, 4u);
  EXPECT_EQ(g.sample.pcie_width, 16u);
  EXPECT_EQ(g.info.pcie_max_width, 16u);
  EXPECT_EQ(g.sample.mem_used_bytes, 4 * kMiB);
  EXPECT_EQ(g.sample.mem_total_bytes, 23028 * kMiB);
  EXPECT_EQ(g.sample.pstate, 8u);
  EXPECT_FALSE(g.sample.mig_enabled.has_value());  // "N/A", not "Disabled"
  EXPECT_EQ(g.info.temp_slowdown_c, 98);
  EXPECT_EQ(g.info.temp_shutdown_c, 101);
  EXPECT_FALSE(g.sample.retired_pages_sbe.has_value());
  ASSERT_TRUE(g.sample.processes.has_value());
  EXPECT_TRUE(g.sample.processes->empty());
  EXPECT_EQ(s.driver_version, "535.129.03");
  EXPECT_EQ(s.cuda_driver_version, 12020);
  EXPECT_TRUE(g.info.caps.has(Capability::kRemappedRows));
  EXPECT_FALSE(g.info.caps.has(Capability::kRetiredPages));
}

TEST(QueryText, H100x8PowerBrake002) {
  const Snapshot s = parse_text("002-h100x8-hw-power-brake-idle");
  ASSERT_EQ(s.gpus.size(), 8u);
  for (const auto& g : s.gpus) {
    SCOPED_TRACE(g.info.pci_bus_id);
    ASSERT_TRUE(g.sample.clock_reasons.has_value());
    EXPECT_TRUE(*g.sample.clock_reasons & clock_reason::kHwSlowdown);
    EXPECT_TRUE(*g.sample.clock_reasons & clock_reason::kHwPowerBrakeSlowdown);
    EXPECT_FALSE(*g.sample.clock_reasons & clock_reason::kSwPowerCap);
    EXPECT_FALSE(*g.sample.clock_reasons & clock_reason::kHwThermalSlowdown);
    EXPECT_EQ(g.sample.sm_clock_mhz, 86u);
    EXPECT_EQ(g.info.max_sm_clock_mhz, 1980u);
    EXPECT_EQ(g.sample.pstate, 0u);
    // T.Limit lines are margins: the reading is 29-31 C, never 56 or -2.
    ASSERT_TRUE(g.sample.temp_c.has_value());
    EXPECT_GE(*g.sample.temp_c, 29);
    EXPECT_LE(*g.sample.temp_c, 32);  // expected.md says 29-31; the capture has 29-32
    EXPECT_FALSE(g.info.temp_slowdown_c.has_value());
    EXPECT_EQ(g.sample.pcie_gen, 5u);
    EXPECT_EQ(g.info.pcie_max_gen, 5u);
    EXPECT_EQ(g.sample.remapped_rows_pending, false);
    EXPECT_EQ(g.sample.power_limit_mw, 700000u);
  }
}

TEST(QueryText, OneGpuMixedReasons003) {
  const Snapshot s = parse_text("003-h100x8-one-gpu-mixed-event-reasons");
  ASSERT_EQ(s.gpus.size(), 8u);
  const uint64_t limiting = clock_reason::kSwPowerCap | clock_reason::kHwPowerBrakeSlowdown |
                            clock_reason::kSwThermalSlowdown;
  for (const auto& g : s.gpus) {
    SCOPED_TRACE(g.info.pci_bus_id);
    if (g.info.pci_bus_id == "00000000:75:00.0") {
      EXPECT_EQ(*g.sample.clock_reasons & limiting, limiting);
      EXPECT_FALSE(*g.sample.clock_reasons & clock_reason::kHwSlowdown);
      EXPECT_EQ(g.sample.temp_c, 39);
      EXPECT_EQ(g.sample.mem_used_bytes, 9221 * kMiB);
    } else {
      EXPECT_EQ(*g.sample.clock_reasons & limiting, 0u);
    }
  }
}

TEST(QueryText, Rtx4090SwPowerCap004) {
  const Snapshot s = parse_text("004-rtx4090x8-sw-power-cap-under-load");
  ASSERT_EQ(s.gpus.size(), 8u);
  const GpuState* a = gpu_by_bus(s, "00000000:23:00.0");
  const GpuState* b = gpu_by_bus(s, "00000000:81:00.0");
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(*a->sample.clock_reasons & clock_reason::kSwPowerCap);
  EXPECT_TRUE(*b->sample.clock_reasons & clock_reason::kSwPowerCap);
  EXPECT_EQ(a->sample.power_mw, 445380u);
  EXPECT_EQ(b->sample.power_mw, 446360u);
  EXPECT_EQ(b->sample.temp_c, 76);  // not the 8 C T.Limit margin
  EXPECT_EQ(b->sample.util_gpu_pct, 100u);
  int swcap = 0;
  for (const auto& g : s.gpus) swcap += (*g.sample.clock_reasons & clock_reason::kSwPowerCap) != 0;
  EXPECT_EQ(swcap, 2);
  EXPECT_FALSE(a->sample.ecc_enabled.value_or(false));
}

TEST(QueryText, VramFullIdle005) {
  const Snapshot s = parse_text("005-rtx4090x8-vram-full-idle");
  const GpuState* g = gpu_by_bus(s, "00000000:81:00.0");
  ASSERT_TRUE(g);
  EXPECT_EQ(g->sample.mem_used_bytes, 24212 * kMiB);
  EXPECT_EQ(g->sample.mem_total_bytes, 24564 * kMiB);
  EXPECT_EQ(g->sample.util_gpu_pct, 0u);
  ASSERT_TRUE(g->sample.processes.has_value());
  ASSERT_EQ(g->sample.processes->size(), 1u);
  EXPECT_EQ((*g->sample.processes)[0].pid, 1100070u);
  EXPECT_EQ((*g->sample.processes)[0].name, "/opt/lepton/venv/bin/python3.10");
  EXPECT_EQ((*g->sample.processes)[0].used_mem_bytes, 24206 * kMiB);
  EXPECT_FALSE((*g->sample.processes)[0].graphics);
}

TEST(QueryText, TitanVIdle006) {
  const Snapshot s = parse_text("006-titan-v-idle-healthy");
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuState& g = s.gpus[0];
  EXPECT_EQ(g.info.name, "NVIDIA TITAN V");
  EXPECT_EQ(g.sample.pcie_gen, 1u);
  EXPECT_EQ(g.info.pcie_max_gen, 3u);
  EXPECT_EQ(g.sample.pstate, 8u);
  EXPECT_EQ(g.sample.clock_reasons, clock_reason::kGpuIdle);
  ASSERT_TRUE(g.sample.processes.has_value());
  EXPECT_EQ(g.sample.processes->size(), 3u);
  EXPECT_EQ(g.sample.mem_used_bytes, 290 * kMiB);
}

TEST(QueryText, H200UnderLoad025) {
  const Snapshot s = parse_text("025-h200-under-load-healthy");
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuState& g = s.gpus[0];
  EXPECT_EQ(g.info.pci_bus_id, "00000000:83:00.0");
  EXPECT_EQ(g.sample.clock_reasons, 0u);
  EXPECT_EQ(g.sample.util_gpu_pct, 100u);
  EXPECT_EQ(g.sample.sm_clock_mhz, 1980u);
  EXPECT_EQ(g.sample.temp_c, 52);
  ASSERT_TRUE(g.sample.power_mw.has_value());
  EXPECT_NEAR(*g.sample.power_mw, 625000.0, 10000.0);
  EXPECT_EQ(g.sample.power_limit_mw, 700000u);
  EXPECT_EQ(g.sample.violations.power_ns, 0u);
}

TEST(QueryText, WindowsEncoderSaturated029) {
  const Snapshot s = parse_text("029-rtx2080super-windows-encoder-saturated");
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuState& g = s.gpus[0];
  EXPECT_EQ(g.info.name, "NVIDIA GeForce RTX 2080 SUPER");
  EXPECT_EQ(g.sample.util_enc_pct, 100u);
  EXPECT_EQ(g.sample.util_gpu_pct, 7u);
  EXPECT_EQ(g.sample.clock_reasons, 0u);  // counters are history, not current reasons
  EXPECT_EQ(g.sample.violations.power_ns, 834002687000ull);
  EXPECT_EQ(g.sample.pcie_gen, 3u);
  EXPECT_EQ(g.info.pcie_max_gen, 3u);  // Host Max 4 does not raise the link max
  EXPECT_EQ(g.info.pcie_gpu_max_gen, 3u);
  EXPECT_EQ(g.sample.power_mw, 97990u);         // Instantaneous, Average is N/A
  EXPECT_EQ(g.sample.power_limit_mw, 250000u);  // nested under GPU Ceiling Power Limit
  EXPECT_EQ(g.info.power_max_limit_mw, 350000u);
  EXPECT_EQ(s.driver_version, "610.62");
  ASSERT_TRUE(g.sample.processes.has_value());
  EXPECT_EQ(g.sample.processes->size(), 21u);
  EXPECT_FALSE(g.sample.processes->front().used_mem_bytes.has_value());  // WDDM
  EXPECT_TRUE(g.sample.processes->front().graphics);
  EXPECT_FALSE(g.sample.persistence_mode.has_value());
}

TEST(QueryText, MigUtilizationNa030) {
  const Snapshot s = parse_text("030-h200-mig-under-load-util-na");
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuState& g = s.gpus[0];
  EXPECT_EQ(g.sample.mig_enabled, true);
  EXPECT_FALSE(g.sample.util_gpu_pct.has_value());
  EXPECT_FALSE(g.sample.util_mem_pct.has_value());
  EXPECT_EQ(g.sample.temp_c, 36);
  EXPECT_EQ(g.sample.mem_temp_c, 39);
  // The whole GPU's FB, not a MIG instance's "Shared FB Memory Usage" or BAR1.
  ASSERT_TRUE(g.sample.mem_total_bytes.has_value());
  EXPECT_GT(*g.sample.mem_total_bytes, 140000 * kMiB);
  EXPECT_LT(*g.sample.mem_used_bytes, 20000 * kMiB);
  EXPECT_EQ(g.sample.power_mw, 294940u);  // Average Power Draw preferred
}

TEST(QueryText, CrlfAndBomGiveTheSameModel) {
  std::string text = read_fixture("001-a10-remapped-rows-pending", "input.txt");
  std::string crlf = "\xEF\xBB\xBF";
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto r = parse_smi_query_text(crlf, "crlf.txt");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->gpus.size(), 1u);
  EXPECT_EQ(r->gpus[0].info.pci_bus_id, "00000000:07:00.0");
  EXPECT_EQ(r->gpus[0].sample.remapped_rows_uncorrectable, 4u);
  EXPECT_EQ(r->gpus[0].info.name, "NVIDIA A10");
}

TEST(QueryText, OldThrottleNamingAndNoGpuIsAnError) {
  const std::string old =
      "==============NVSMI LOG==============\n\n"
      "Driver Version                      : 418.43\n\n"
      "GPU 00000000:01:00.0\n"
      "    Product Name                    : Tesla V100\n"
      "    Clocks Throttle Reasons\n"
      "        Idle                        : Not Active\n"
      "        SW Power Cap                : Active\n"
      "    Temperature\n"
      "        GPU Current Temp            : 81 C\n"
      "    Power Readings\n"
      "        Power Draw                  : 299.50 W\n"
      "        Power Limit                 : 300.00 W\n";
  auto r = parse_smi_query_text(old, "old.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->gpus[0].sample.clock_reasons, clock_reason::kSwPowerCap);
  EXPECT_EQ(r->gpus[0].sample.power_limit_mw, 300000u);
  EXPECT_EQ(r->gpus[0].sample.temp_c, 81);

  auto bad = parse_smi_query_text("==============NVSMI LOG==============\n\nDriver Version : 1\n",
                                  "bad.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().where, "bad.txt:3");
  EXPECT_NE(bad.error().message.find("expected"), std::string::npos);
}

}  // namespace
}  // namespace gw
