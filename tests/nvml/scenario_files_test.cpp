// Every bundled scenario parses, and what each one scripts comes back through the real loader.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_support.h"
#include "sources/gpu_source.h"
#include "sources/nvml/scenario.h"

namespace gw::nvml::test {
namespace {

namespace cr = clock_reason;
constexpr uint64_t kMiB = 1024ull * 1024;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Snapshot open_and_sample(const std::string& file, double t) {
  auto src = open_fake(scenario(file));
  EXPECT_TRUE(src.ok()) << (src.ok() ? "" : src.error().to_string());
  if (!src.ok()) return {};
  return sample_at(**src, t);
}

TEST(ScenarioFiles, AllParseAndNameThemselves) {
  size_t n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(GW_SOURCE_DIR) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    ++n;
    auto s = parse_scenario(read(e.path().string()), e.path().filename().string());
    ASSERT_TRUE(s.ok()) << s.error().to_string();
    EXPECT_EQ(s->name + ".json", e.path().filename().string());
    EXPECT_FALSE(s->description.empty()) << e.path();
    EXPECT_FALSE(s->gpus.empty()) << e.path();
  }
  EXPECT_GE(n, 11u);
}

TEST(ScenarioFiles, HealthyBoxHasNoReasonsAndAllLinksUp) {
  const Snapshot s = open_and_sample("healthy-8x-h100.json", 0);
  ASSERT_EQ(s.gpus.size(), 8u);
  for (const GpuState& g : s.gpus) {
    EXPECT_EQ(g.access, GpuAccess::kOk);
    EXPECT_EQ(g.sample.clock_reasons, 0u);
    EXPECT_GE(g.sample.util_gpu_pct.value_or(0), 97u);
    EXPECT_LT(g.sample.temp_c.value_or(99), *g.info.temp_max_operating_c);
    EXPECT_EQ(g.sample.pcie_gen, g.info.pcie_max_gen);
    ASSERT_EQ(g.sample.nvlinks.size(), 18u);
    for (const NvLinkInfo& l : g.sample.nvlinks) EXPECT_TRUE(l.active);
  }
}

TEST(ScenarioFiles, ThermalThrottleGoesFromSwToHwSlowdown) {
  auto src = open_fake(scenario("thermal-throttle.json"));
  ASSERT_TRUE(src.ok());
  const GpuState g0 = sample_at(**src, 0).gpus.at(2);
  EXPECT_EQ(g0.sample.temp_c, 67);
  EXPECT_EQ(g0.sample.clock_reasons, 0u);
  const GpuState g60 = sample_at(**src, 60).gpus.at(2);
  EXPECT_EQ(g60.sample.temp_c, 88);
  EXPECT_EQ(g60.sample.clock_reasons, cr::kSwThermalSlowdown);
  EXPECT_EQ(g60.sample.sm_clock_mhz, 1590u);
  const GpuState g90 = sample_at(**src, 90).gpus.at(2);
  EXPECT_EQ(g90.sample.temp_c, 91);
  EXPECT_GT(*g90.sample.temp_c, *g90.info.temp_slowdown_c);
  EXPECT_EQ(g90.sample.mem_temp_c, 96);
  EXPECT_EQ(g90.sample.clock_reasons,
            cr::kSwThermalSlowdown | cr::kHwThermalSlowdown | cr::kHwSlowdown);
  EXPECT_EQ(g90.sample.sm_clock_mhz, 795u);
  EXPECT_EQ(g90.sample.violations.hw_thermal_ns, 12600000000u);
  EXPECT_EQ(sample_at(**src, 90).gpus.at(1).sample.clock_reasons, 0u);  // the others are fine
}

TEST(ScenarioFiles, PowerCapAndBrake) {
  auto src = open_fake(scenario("power-cap-and-brake.json"));
  ASSERT_TRUE(src.ok());
  const Snapshot a = sample_at(**src, 0);
  EXPECT_EQ(a.gpus[1].sample.power_limit_mw, 450000u);
  EXPECT_EQ(a.gpus[1].info.power_default_limit_mw, 700000u);
  EXPECT_EQ(a.gpus[1].sample.clock_reasons, cr::kSwPowerCap);
  EXPECT_EQ(a.gpus[5].sample.clock_reasons, 0u);
  const Snapshot b = sample_at(**src, 20);
  EXPECT_EQ(b.gpus[5].sample.clock_reasons, cr::kHwSlowdown | cr::kHwPowerBrakeSlowdown);
  EXPECT_EQ(b.gpus[5].sample.sm_clock_mhz, 690u);
  EXPECT_EQ(b.gpus[5].sample.violations.hw_power_brake_ns, 18400000000u);
}

TEST(ScenarioFiles, VramNearlyFull) {
  const GpuState g = open_and_sample("vram-nearly-full.json", 0).gpus.at(3);
  EXPECT_EQ(g.sample.mem_used_bytes, 80921 * kMiB);
  EXPECT_EQ(g.sample.mem_free_bytes, (81559 - 80921 - 516) * kMiB);
  EXPECT_EQ(g.sample.processes->at(0).used_mem_bytes, 80405 * kMiB);
}

TEST(ScenarioFiles, PcieIdleLowGenIsNormalButLoadedLowGenOrWidthIsNot) {
  auto src = open_fake(scenario("pcie-link.json"));
  ASSERT_TRUE(src.ok());
  const Snapshot a = sample_at(**src, 0);
  ASSERT_EQ(a.gpus.size(), 4u);
  EXPECT_EQ(a.gpus[0].sample.pcie_gen, 1u);
  EXPECT_EQ(a.gpus[0].sample.util_gpu_pct, 0u);
  EXPECT_EQ(a.gpus[0].sample.clock_reasons, cr::kGpuIdle);
  EXPECT_EQ(a.gpus[0].info.pcie_max_gen, 4u);
  EXPECT_EQ(a.gpus[1].sample.pcie_gen, 2u);
  EXPECT_GT(a.gpus[1].sample.util_gpu_pct.value_or(0), 50u);
  EXPECT_EQ(a.gpus[2].sample.pcie_width, 8u);
  EXPECT_EQ(a.gpus[2].info.pcie_max_width, 16u);
  const Snapshot b = sample_at(**src, 30);
  EXPECT_EQ(b.gpus[0].sample.pcie_gen, 4u);
  EXPECT_EQ(b.gpus[0].sample.pcie_width, 16u);
  EXPECT_EQ(b.gpus[0].sample.util_gpu_pct, 96u);
  EXPECT_FALSE(b.gpus[0].info.caps.has(Capability::kNvLink));
  EXPECT_TRUE(b.gpus[0].sample.nvlinks.empty());
}

TEST(ScenarioFiles, EccDoubleBitWithPendingRemap) {
  auto src = open_fake(scenario("ecc-dbe-row-remap.json"));
  ASSERT_TRUE(src.ok());
  const GpuState a = sample_at(**src, 0).gpus.at(4);
  EXPECT_EQ(a.sample.ecc_dbe_volatile, 0u);
  EXPECT_EQ(a.sample.ecc_sbe_aggregate, 41u);
  const GpuState b = sample_at(**src, 10).gpus.at(4);
  EXPECT_EQ(b.sample.ecc_dbe_volatile, 2u);
  EXPECT_EQ(b.sample.ecc_dbe_aggregate, 2u);
  EXPECT_EQ(b.sample.remapped_rows_uncorrectable, 1u);
  EXPECT_EQ(b.sample.remapped_rows_pending, true);
  EXPECT_EQ(b.sample.remapped_rows_failure, false);
}

TEST(ScenarioFiles, ConsumerGpuReportsUnsupportedAsUnknown) {
  const Snapshot s = open_and_sample("consumer-rtx4090.json", 0);
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuState& g = s.gpus[0];
  EXPECT_EQ(g.access, GpuAccess::kOk);
  EXPECT_TRUE(g.errors.empty());
  EXPECT_EQ(g.info.architecture, "Ada");
  EXPECT_FALSE(g.info.serial);
  for (Capability c : {Capability::kEcc, Capability::kRemappedRows, Capability::kNvLink,
                       Capability::kMigMode, Capability::kMemoryTemperature})
    EXPECT_FALSE(g.info.caps.has(c)) << capability_name(c);
  EXPECT_FALSE(g.sample.ecc_enabled);
  EXPECT_FALSE(g.sample.remapped_rows_pending);
  EXPECT_FALSE(g.sample.mig_enabled);
  EXPECT_FALSE(g.sample.mem_temp_c);
  EXPECT_EQ(g.sample.fan_pct, 64u);
  EXPECT_EQ(g.sample.pstate, 2u);
  ASSERT_EQ(g.sample.processes->size(), 2u);
  EXPECT_EQ(g.sample.processes->at(0).name, "python3");  // compute first
  EXPECT_TRUE(g.sample.processes->at(1).graphics);
  EXPECT_EQ(g.sample.processes->at(1).name, "/usr/lib/xorg/Xorg");
}

TEST(ScenarioFiles, DemoFleetThroughOpenGpuSource) {
  GpuSourceOptions o;
  o.demo = true;
  auto src = open_gpu_source(o);
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  auto s = (*src)->sample();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->source, "demo fleet (fake NVML)");
  EXPECT_EQ(s->hostname, "gpu-node-17");
  ASSERT_EQ(s->gpus.size(), 8u);
  EXPECT_TRUE(*s->gpus[2].sample.clock_reasons & cr::kHwThermalSlowdown);
  EXPECT_EQ(s->gpus[5].sample.pcie_width, 8u);
  EXPECT_EQ(s->gpus[6].sample.remapped_rows_pending, true);
  EXPECT_EQ(s->gpus[7].sample.util_gpu_pct, 0u);
  EXPECT_GT(*s->gpus[7].sample.mem_used_bytes, 70 * 1024 * kMiB);
  EXPECT_EQ(s->gpus[0].sample.clock_reasons, 0u);
}

TEST(ScenarioFiles, ScenarioThroughOpenGpuSourceIsLabelled) {
  GpuSourceOptions o;
  o.scenario = scenario("vram-nearly-full.json");
  auto src = open_gpu_source(o);
  ASSERT_TRUE(src.ok()) << src.error().to_string();
  auto s = (*src)->sample();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->source, "scenario vram-nearly-full.json (fake NVML)");
}

}  // namespace
}  // namespace gw::nvml::test
