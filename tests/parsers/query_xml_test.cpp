// nvidia-smi -q -x parser against the real captures (418-era through 590 schemas).
#include <gtest/gtest.h>

#include "fixture_util.h"
#include "sources/smi/smi_parsers.h"

namespace gw {
namespace {

using test::gpu_by_bus;
using test::kMiB;
using test::read_fixture;

Snapshot parse_xml(const std::string& id) {
  auto r = parse_smi_query_xml(read_fixture(id, "input.xml"), id);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? r.value() : Snapshot{};
}

TEST(QueryXml, TeslaT4WidthX8_014) {
  const Snapshot s = parse_xml("014-tesla-t4-pcie-width-x8");
  ASSERT_EQ(s.gpus.size(), 1u);
  const GpuState& g = s.gpus[0];
  EXPECT_EQ(g.info.name, "Tesla T4");
  EXPECT_EQ(g.info.pci_bus_id, "00000000:00:1E.0");
  EXPECT_EQ(g.sample.pcie_width, 8u);
  EXPECT_EQ(g.info.pcie_max_width, 16u);
  EXPECT_EQ(g.sample.pcie_gen, 3u);
  EXPECT_EQ(g.info.pcie_max_gen, 3u);
  EXPECT_EQ(g.sample.pstate, 0u);
  EXPECT_EQ(g.sample.clock_reasons.value_or(~0ull) & ~clock_reason::kGpuIdle, 0u);
  EXPECT_EQ(g.sample.mem_used_bytes, 1032 * kMiB);
  EXPECT_EQ(g.sample.retired_pages_dbe, 0u);
  EXPECT_EQ(g.sample.retired_pages_pending, false);
  ASSERT_TRUE(g.sample.processes.has_value());
  ASSERT_EQ(g.sample.processes->size(), 2u);
  EXPECT_EQ((*g.sample.processes)[1].pid, 5762u);
  EXPECT_EQ((*g.sample.processes)[1].name, "python");
  EXPECT_TRUE((*g.sample.processes)[0].graphics);
}

TEST(QueryXml, A10gWidthX8Idle015) {
  const Snapshot s = parse_xml("015-a10g-pcie-width-x8-idle");
  const GpuState& g = s.gpus.at(0);
  EXPECT_EQ(g.sample.pcie_width, 8u);
  EXPECT_EQ(g.info.pcie_max_width, 16u);
  EXPECT_EQ(g.sample.pcie_gen, 1u);
  EXPECT_EQ(g.info.pcie_max_gen, 4u);
  EXPECT_EQ(g.sample.pstate, 8u);
  EXPECT_EQ(g.sample.clock_reasons, clock_reason::kGpuIdle);
}

TEST(QueryXml, DualA5000Driver590_016) {
  const Snapshot s = parse_xml("016-dual-a5000-vram-held-idle");
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuState* a = gpu_by_bus(s, "00000000:81:00.0");
  const GpuState* b = gpu_by_bus(s, "00000000:C1:00.0");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->sample.mem_used_bytes, 22437 * kMiB);
  EXPECT_EQ(a->sample.mem_total_bytes, 24564 * kMiB);
  EXPECT_EQ(a->sample.util_gpu_pct, 0u);
  EXPECT_EQ(b->sample.mem_used_bytes, 17253 * kMiB);
  EXPECT_EQ(a->sample.temp_c, 13);
  EXPECT_EQ(a->sample.power_mw, 6410u);  // average_power_draw
  EXPECT_EQ(a->sample.power_limit_mw, 230000u);
  EXPECT_EQ(a->info.pcie_gpu_max_gen, 4u);
  // clocks_event_reasons_counters (us) -> ns, history only.
  EXPECT_EQ(a->sample.violations.power_ns, 31637354094000ull);
  EXPECT_EQ(a->sample.clock_reasons, clock_reason::kGpuIdle);
  EXPECT_EQ(a->sample.remapped_rows_pending, false);
}

TEST(QueryXml, Rtx3080Busy017) {
  const GpuState g = parse_xml("017-rtx3080-vram-90pct-busy").gpus.at(0);
  EXPECT_EQ(g.sample.mem_used_bytes, 9184 * kMiB);
  EXPECT_EQ(g.sample.mem_total_bytes, 10240 * kMiB);
  EXPECT_EQ(g.sample.util_gpu_pct, 65u);
  EXPECT_EQ(g.sample.power_mw, 139620u);
}

TEST(QueryXml, SwPowerCapWhileIdle018) {
  const GpuState g = parse_xml("018-rtx3090-sw-power-cap-while-idle").gpus.at(0);
  ASSERT_TRUE(g.sample.clock_reasons.has_value());
  EXPECT_TRUE(*g.sample.clock_reasons & clock_reason::kSwPowerCap);
  EXPECT_EQ(g.sample.pstate, 8u);
  EXPECT_EQ(g.sample.power_mw, 35060u);
  EXPECT_EQ(g.sample.power_limit_mw, 350000u);
}

TEST(QueryXml, DualRtx2070X8_019) {
  const Snapshot s = parse_xml("019-dual-rtx2070-pcie-x8-each");
  ASSERT_EQ(s.gpus.size(), 2u);
  for (const auto& g : s.gpus) {
    EXPECT_EQ(g.sample.pcie_width, 8u);
    EXPECT_EQ(g.info.pcie_max_width, 16u);
    EXPECT_EQ(g.info.pcie_max_gen, 3u);
  }
  EXPECT_EQ(s.gpus[1].sample.power_mw, 11820u);  // instant_power_draw when average is N/A
}

TEST(QueryXml, MigUtilNotZero020) {
  const GpuState g = parse_xml("020-a100-sxm4-80gb-mig-enabled-healthy").gpus.at(0);
  EXPECT_EQ(g.sample.mig_enabled, true);
  EXPECT_FALSE(g.sample.util_gpu_pct.has_value());  // N/A under MIG, not 0
  EXPECT_EQ(g.sample.mem_used_bytes, 50 * kMiB);    // whole GPU, not a 19968 MiB instance
  EXPECT_GT(*g.sample.mem_total_bytes, 80000 * kMiB);
  EXPECT_EQ(g.sample.power_mw, 67030u);
  EXPECT_EQ(g.sample.ecc_enabled, true);
  EXPECT_FALSE(g.sample.remapped_rows_pending.has_value());
}

TEST(QueryXml, Driver418OldSchema021) {
  const Snapshot s = parse_xml("021-gtx1660ti-driver418-old-schema-healthy");
  const GpuState& g = s.gpus.at(0);
  EXPECT_EQ(g.info.name, "Graphics Device");
  EXPECT_EQ(g.info.pci_bus_id, "00000000:43:00.0");
  EXPECT_EQ(g.sample.clock_reasons, clock_reason::kGpuIdle);  // clocks_throttle_reasons
  EXPECT_EQ(g.sample.power_mw, 8930u);
  EXPECT_EQ(g.sample.power_limit_mw, 130000u);
  EXPECT_EQ(g.sample.temp_c, 40);
  EXPECT_EQ(g.info.temp_shutdown_c, 96);
  EXPECT_EQ(s.driver_version, "418.43");
  EXPECT_EQ(s.cuda_driver_version, 10010);
}

TEST(QueryXml, HostLimitsGen3_022) {
  const GpuState g = parse_xml("022-rtx4090-host-limits-pcie-gen3").gpus.at(0);
  EXPECT_EQ(g.info.pcie_max_gen, 3u);      // what host and device allow together
  EXPECT_EQ(g.info.pcie_gpu_max_gen, 4u);  // what the GPU could do
  EXPECT_EQ(g.sample.pcie_gen, 1u);
  EXPECT_EQ(g.sample.pstate, 8u);
}

TEST(QueryXml, P100RetiredPagesLifetimeSbe023) {
  const GpuState g = parse_xml("023-tesla-p100-healthy-3-lifetime-sbe").gpus.at(0);
  EXPECT_EQ(g.sample.ecc_enabled, true);
  EXPECT_EQ(g.sample.ecc_sbe_volatile, 0u);
  EXPECT_EQ(g.sample.ecc_dbe_volatile, 0u);
  EXPECT_EQ(g.sample.ecc_sbe_aggregate, 3u);
  EXPECT_EQ(g.sample.ecc_dbe_aggregate, 0u);
  EXPECT_EQ(g.sample.retired_pages_sbe, 0u);
  EXPECT_EQ(g.sample.retired_pages_dbe, 0u);
  EXPECT_EQ(g.sample.retired_pages_pending, false);
  EXPECT_FALSE(g.sample.remapped_rows_uncorrectable.has_value());
  EXPECT_TRUE(g.info.caps.has(Capability::kRetiredPages));
}

TEST(QueryXml, WindowsWddm024) {
  const GpuState g = parse_xml("024-rtx2080-windows-wddm-pcie-x8").gpus.at(0);
  EXPECT_EQ(g.sample.pcie_width, 8u);
  EXPECT_EQ(g.info.pcie_max_width, 16u);
  EXPECT_EQ(g.sample.mem_used_bytes, 862 * kMiB);
  EXPECT_EQ(g.sample.power_mw, 14500u);
}

TEST(QueryXml, TruncatedXmlNamesTheLine) {
  std::string text = read_fixture("014-tesla-t4-pcie-width-x8", "input.xml");
  text.resize(text.size() / 2);
  auto r = parse_smi_query_xml(text, "t4.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().where.rfind("t4.xml:", 0), 0u);
  const int line = std::stoi(r.error().where.substr(7));
  EXPECT_GT(line, 100);  // near the cut, not line 1
  EXPECT_NE(r.error().message.find("expected"), std::string::npos);
}

TEST(QueryXml, WrongRootIsAnError) {
  auto r = parse_smi_query_xml("<?xml version=\"1.0\"?>\n<other/>\n", "x.xml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("nvidia_smi_log"), std::string::npos);
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// A DOM costs several times its text: a document larger than nvidia-smi writes for any machine
// is refused with its size, never held (bounded memory, issue 20).
TEST(SmiQueryXml, ADocumentBeyondAnyMachinesIsRefusedWithItsSize) {
  std::string xml = "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n";
  for (size_t i = 0; xml.size() <= kMaxSmiXmlBytes; ++i)
    xml += "<gpu id=\"00000000:" + std::to_string(10 + i % 80) +
           ":00.0\"><product_name>NVIDIA H100</product_name></gpu>\n";
  xml += "</nvidia_smi_log>\n";
  const auto r = parse_smi_query_xml(xml, "big.xml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "capture.smi_xml");
  EXPECT_NE(r.error().message.find("at most 8 MiB"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().where, "big.xml:1");
}

}  // namespace
}  // namespace gw
