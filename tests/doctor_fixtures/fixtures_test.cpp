// Each real capture in fixtures/captures/ (copied from the project's shared fixture set with its
// source URL in expected.md) goes through the parsers and the rules; the assertions are the case's
// MUST and MUST-NOT items, by finding code and GPU (PCI address).
#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <string>

#include "cli/doctor_run.h"
#include "diagnose/diagnose.h"

namespace gw {
namespace {

struct Case {
  cli::DoctorRun run;
  const std::vector<Finding>& f() const { return run.findings; }
};

Case load(const std::string& name, const std::string& file) {
  Case c{
      cli::run_from_files({std::string(GW_SOURCE_DIR "/fixtures/captures/") + name + "/" + file})};
  EXPECT_EQ(c.run.inputs_read, 1u) << name << ": the capture could not be parsed";
  return c;
}

std::string norm(const std::string& pci) {
  return normalize_pci_bus_id(pci).value_or(pci);
}

bool is_on(const Finding& x, const std::string& pci) {
  return pci.empty() || (x.pci_bus_id && norm(*x.pci_bus_id) == norm(pci));
}

// Findings with `code` (a prefix ending in '.' matches a whole area) on `pci` ("" = any GPU).
std::vector<Finding> with(const Case& c, const std::string& code, const std::string& pci = "") {
  std::vector<Finding> out;
  for (const Finding& x : c.f()) {
    const bool code_ok = code.back() == '.' ? x.code.rfind(code, 0) == 0 : x.code == code;
    if (code_ok && is_on(x, pci)) out.push_back(x);
  }
  return out;
}

std::string dump(const Case& c) {
  std::string s;
  for (const Finding& x : c.f())
    s += "  " + x.code + " [" + std::string(severity_name(x.severity)) + "] " + x.title + "\n";
  return s.empty() ? "  (no findings)\n" : s;
}

void must(const Case& c, const std::string& code, const std::string& pci = "") {
  EXPECT_FALSE(with(c, code, pci).empty()) << "missing " << code << " on '" << pci << "'\n"
                                           << dump(c);
}

void must_not(const Case& c, std::initializer_list<const char*> codes,
              const std::string& pci = "") {
  for (const char* code : codes) {
    EXPECT_TRUE(with(c, code, pci).empty()) << "unexpected " << code << " on '" << pci << "'\n"
                                            << dump(c);
  }
}

// Healthy: nothing worse than info.
void healthy(const Case& c) {
  EXPECT_EQ(worst_severity(c.f()), Severity::kInfo) << dump(c);
  EXPECT_EQ(cli::doctor_exit_code(c.run), cli::kDoctorHealthy) << dump(c);
}

bool title_has(const std::vector<Finding>& fs, const std::string& text) {
  return std::any_of(fs.begin(), fs.end(),
                     [&](const Finding& x) { return x.title.find(text) != std::string::npos; });
}

const std::initializer_list<const char*> kThrottle = {
    "thermal.sw_slowdown", "thermal.hw_slowdown", "power.hw_power_brake",
    "power.hw_slowdown",   "power.sw_cap",        "clocks.low_under_load"};

TEST(Fixture001, RowRemapPendingNeedsResetNotRma) {
  const Case c = load("001-a10-remapped-rows-pending", "input.txt");
  must(c, "ecc.row_remap_pending", "00000000:07:00.0");
  EXPECT_EQ(with(c, "ecc.row_remap_pending")[0].severity, Severity::kWarning);
  must_not(c, {"ecc.row_remap_failure", "thermal.", "power.", "pcie.", "memory.", "xid."});
  EXPECT_EQ(cli::doctor_exit_code(c.run), cli::kDoctorWarning);
}

TEST(Fixture002, EveryGpuPowerBrakedCheckTheNode) {
  const Case c = load("002-h100x8-hw-power-brake-idle", "input.txt");
  const auto brakes = with(c, "power.hw_power_brake");
  ASSERT_EQ(brakes.size(), 8u) << dump(c);
  for (const Finding& x : brakes) {
    EXPECT_EQ(x.severity, Severity::kCritical);
    EXPECT_NE(x.remedy.find("whole node"), std::string::npos);
  }
  must(c, "power.hw_power_brake", "00000000:19:00.0");
  must(c, "power.hw_power_brake", "00000000:DB:00.0");
  must_not(c, {"thermal.", "power.sw_cap", "power.sw_cap_idle", "pcie.", "ecc."});
}

TEST(Fixture003, OnlyOneGpuFlagsAndNoTemperatureProblem) {
  const Case c = load("003-h100x8-one-gpu-mixed-event-reasons", "input.txt");
  must(c, "power.hw_power_brake", "00000000:75:00.0");
  for (const Finding& x : c.f()) {
    if (x.severity != Severity::kInfo) {
      EXPECT_TRUE(is_on(x, "00000000:75:00.0")) << x.code << " on another GPU\n" << dump(c);
    }
  }
  must_not(c, {"thermal.near_slowdown", "thermal.hotter_than_peers", "thermal.hw_slowdown", "pcie.",
               "ecc."});
}

TEST(Fixture004, SwPowerCapOnTheTwoLoadedGpusOnly) {
  const Case c = load("004-rtx4090x8-sw-power-cap-under-load", "input.txt");
  must(c, "power.sw_cap", "00000000:23:00.0");
  must(c, "power.sw_cap", "00000000:81:00.0");
  EXPECT_EQ(with(c, "power.sw_cap").size(), 2u) << dump(c);
  must_not(c,
           {"pcie.", "thermal.sw_slowdown", "thermal.hw_slowdown", "ecc.", "power.hw_power_brake"});
}

TEST(Fixture005, VramFullAndHeldByIdleProcesses) {
  const Case c = load("005-rtx4090x8-vram-full-idle", "input.txt");
  for (const char* pci :
       {"00000000:81:00.0", "00000000:41:00.0", "00000000:61:00.0", "00000000:C1:00.0"})
    must(c, "memory.near_full", pci);
  for (const char* pci :
       {"00000000:01:00.0", "00000000:41:00.0", "00000000:61:00.0", "00000000:81:00.0"})
    must(c, "memory.held_by_idle", pci);
  must_not(c, {"memory.held_by_idle"}, "00000000:23:00.0");
  must_not(c, {"memory.held_by_idle"}, "00000000:C1:00.0");
  must_not(c, kThrottle);
  must_not(c, {"pcie.", "ecc."});
}

TEST(Fixture006, IdleTitanVIsHealthy) {
  const Case c = load("006-titan-v-idle-healthy", "input.txt");
  healthy(c);
  must_not(c, {"pcie.", "power.", "thermal.", "ecc.", "util.low", "memory."});
}

TEST(Fixture007, DbeRowRemapAndContainedErrors) {
  const Case c = load("007-dmesg-xid48-63-94-dbe-row-remap", "dmesg.log");
  const auto mem = with(c, "xid.memory", "00000000:19:00.0");
  EXPECT_TRUE(title_has(mem, "Xid 48 ")) << dump(c);
  EXPECT_TRUE(title_has(mem, "Xid 63 ")) << dump(c);
  EXPECT_TRUE(title_has(mem, "Xid 94 ")) << dump(c);
  EXPECT_EQ(worst_severity(c.f()), Severity::kCritical);
  EXPECT_EQ(with(c, "xid.").size(), 3u) << "peermem lines are not Xids\n" << dump(c);
  must_not(c, {"gpu.fallen_off_bus", "thermal.", "power."});
}

TEST(Fixture008, RepeatedApplicationXid13WithCrashes) {
  const Case c = load("008-dmesg-xid13-43-out-of-range-repeated", "dmesg.log");
  const auto app = with(c, "xid.application", "00000000:38:00.0");
  EXPECT_TRUE(title_has(app, "Xid 13 ")) << dump(c);
  EXPECT_TRUE(title_has(app, "Xid 43 ")) << dump(c);
  for (const Finding& x : app) {
    EXPECT_EQ(x.remedy.find("RMA"), std::string::npos);
    if (x.title.find("Xid 13 ") != std::string::npos) {
      EXPECT_NE(x.remedy.find("dcgmi diag"), std::string::npos);  // recurring: rule out hardware
    }
  }
  must_not(c, {"gpu.fallen_off_bus", "ecc.", "xid.memory", "xid.hardware", "thermal.", "power."});
}

TEST(Fixture009, GspTimeoutsNeedAReset) {
  const Case c = load("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const auto drv = with(c, "xid.driver", "00000000:9B:00.0");
  ASSERT_FALSE(drv.empty()) << dump(c);
  EXPECT_TRUE(title_has(drv, "Xid 119 "));
  EXPECT_EQ(drv[0].severity, Severity::kCritical);
  EXPECT_NE(drv[0].remedy.find("Reset the GPU"), std::string::npos);
  must_not(c, {"ecc.", "thermal.", "pcie.", "xid.application"});
}

TEST(Fixture010, FallenOffTheBusWithSecondarySwitchLinks) {
  const Case c = load("010-dmesg-xid79-fallen-off-bus-nvswitch-sxid", "dmesg.log");
  must(c, "gpu.fallen_off_bus", "00000000:91:00.0");
  EXPECT_EQ(with(c, "gpu.fallen_off_bus").size(), 1u) << dump(c);
  const auto sx = with(c, "nvswitch.sxid");
  ASSERT_EQ(sx.size(), 1u) << dump(c);
  EXPECT_FALSE(sx[0].gpu.has_value());
  EXPECT_FALSE(sx[0].pci_bus_id.has_value());
  EXPECT_NE(sx[0].title.find("20034"), std::string::npos);
  must_not(c, {"xid.other", "xid.hardware", "xid.application", "ecc.", "thermal."});
}

TEST(Fixture011, PytorchXidsAndContextSwitchTimeouts) {
  const Case c = load("011-dmesg-xid13-109-31-pytorch", "dmesg.log");
  const auto app = with(c, "xid.application", "00000000:CB:00.0");
  EXPECT_TRUE(title_has(app, "Xid 13 ")) << dump(c);
  EXPECT_TRUE(title_has(app, "Xid 31 ")) << dump(c);
  const auto drv = with(c, "xid.driver", "00000000:CB:00.0");
  ASSERT_TRUE(title_has(drv, "Xid 109 ")) << dump(c);
  EXPECT_NE(drv[0].remedy.find("Reset the GPU"), std::string::npos);
  EXPECT_EQ(with(c, "xid.").size(), 3u) << dump(c);
  must_not(c, {"gpu.fallen_off_bus", "ecc.", "thermal."});
}

TEST(Fixture012, HealthyBootLogHasNoFindings) {
  const Case c = load("012-dmesg-hgx-boot-no-xid-healthy", "dmesg.log");
  EXPECT_TRUE(c.f().empty()) << dump(c);
  EXPECT_EQ(cli::doctor_exit_code(c.run), cli::kDoctorHealthy);
}

TEST(Fixture013, HealthyH100TableHasNoProblem) {
  const Case c = load("013-h100x8-nvidia-smi-table-healthy", "input.txt");
  healthy(c);
}

TEST(Fixture014, T4LinkWidthX8) {
  const Case c = load("014-tesla-t4-pcie-width-x8", "input.xml");
  must(c, "pcie.width_below_max", "00000000:00:1E.0");
  must_not(c, {"pcie.gen_below_max", "pcie.host_limited", "clocks.low_under_load", "power.",
               "thermal.", "ecc.", "memory."});
}

TEST(Fixture015, A10gLinkWidthX8Idle) {
  const Case c = load("015-a10g-pcie-width-x8-idle", "input.xml");
  must(c, "pcie.width_below_max", "00000000:00:1E.0");
  must_not(c, {"pcie.gen_below_max", "thermal.", "power.", "ecc."});
}

TEST(Fixture016, A5000VramHeldWhileIdle) {
  const Case c = load("016-dual-a5000-vram-held-idle", "input.xml");
  must(c, "memory.near_full", "00000000:81:00.0");
  must(c, "memory.held_by_idle", "00000000:81:00.0");
  must(c, "memory.held_by_idle", "00000000:C1:00.0");
  must_not(c, {"memory.near_full"}, "00000000:C1:00.0");
  must_not(c, kThrottle);  // lifetime capping counters (power.cap_history, info) are history
  must_not(c, {"pcie.", "thermal."});
}

TEST(Fixture017, BorderlineVramStaysUnderTheDocumentedThreshold) {
  const Case c = load("017-rtx3080-vram-90pct-busy", "input.xml");
  must_not(c, {"memory.near_full"});  // 89.7 % < 90 % (docs/checks.md)
  must_not(c, kThrottle);
  must_not(c, {"pcie.", "thermal."});
}

TEST(Fixture018, SwPowerCapWhileIdleIsInformational) {
  const Case c = load("018-rtx3090-sw-power-cap-while-idle", "input.xml");
  must(c, "power.sw_cap_idle");
  must_not(c, {"power.sw_cap", "power.hw_power_brake", "power.hw_slowdown", "pcie.", "thermal."});
  healthy(c);
}

TEST(Fixture019, BothRtx2070AtX8) {
  const Case c = load("019-dual-rtx2070-pcie-x8-each", "input.xml");
  must(c, "pcie.width_below_max", "00000000:01:00.0");
  must(c, "pcie.width_below_max", "00000000:02:00.0");
  must_not(c, kThrottle);
  must_not(c, {"pcie.gen_below_max", "thermal.", "memory.", "ecc."});
}

TEST(Fixture020, MigA100IsHealthy) {
  const Case c = load("020-a100-sxm4-80gb-mig-enabled-healthy", "input.xml");
  healthy(c);
  must_not(c, {"util.", "memory.", "pcie.", "ecc.", "thermal.", "power."});
}

TEST(Fixture021, OldSchemaGtx1660TiIsHealthy) {
  const Case c = load("021-gtx1660ti-driver418-old-schema-healthy", "input.xml");
  healthy(c);
  must_not(c, {"pcie.", "thermal.", "power."});
}

TEST(Fixture022, HostLimitsGen4GpuToGen3) {
  const Case c = load("022-rtx4090-host-limits-pcie-gen3", "input.xml");
  must(c, "pcie.host_limited");
  must_not(c, {"pcie.gen_below_max", "thermal.", "memory.", "ecc.", "power."});
}

TEST(Fixture023, LifetimeSbeIsHistory) {
  const Case c = load("023-tesla-p100-healthy-3-lifetime-sbe", "input.xml");
  healthy(c);
  must_not(c, {"ecc.", "pcie.", "memory.", "thermal.", "power."});
}

TEST(Fixture024, WindowsRtx2080AtX8) {
  const Case c = load("024-rtx2080-windows-wddm-pcie-x8", "input.xml");
  must(c, "pcie.width_below_max", "00000000:0A:00.0");
  must_not(c, {"thermal.", "power.", "memory.", "pcie.gen_below_max"});
}

TEST(Fixture025, H200UnderLoadIsHealthy) {
  const Case c = load("025-h200-under-load-healthy", "input.txt");
  healthy(c);
  must_not(c, {"power.", "memory.", "pcie.", "ecc.", "thermal."});
}

TEST(Fixture026, H100CsvUnderLoadIsHealthy) {
  const Case c = load("026-h100-under-load-csv-healthy", "input.csv");
  healthy(c);
  must_not(c, kThrottle);
  must_not(c, {"pcie.", "ecc.", "memory."});
}

TEST(Fixture027, EncoderLoadIsNotIdle) {
  const Case c = load("027-l40s-nvenc-load-dmon", "dmon.log");
  must(c, "util.video_engine_busy");
  must_not(c, {"util.low", "memory.held_by_idle", "thermal.", "power."});
  healthy(c);
}

TEST(Fixture028, EncoderBoundAndHostGen5IsFine) {
  const Case c = load("028-rtx4080super-nvenc-load-csv", "input.csv");
  must(c, "util.video_engine_busy");
  must_not(c, {"util.low", "pcie.", "ecc."});
  healthy(c);
}

TEST(Fixture029, SaturatedEncoderAndOnlyHistoricalCapping) {
  const Case c = load("029-rtx2080super-windows-encoder-saturated", "input.txt");
  const auto v = with(c, "util.video_engine_busy");
  ASSERT_FALSE(v.empty()) << dump(c);
  EXPECT_NE(v[0].title.find("saturated"), std::string::npos);
  must_not(c, {"power.sw_cap", "thermal.", "pcie.", "util.low"});
}

TEST(Fixture030, MigH200UnderLoadIsHealthy) {
  const Case c = load("030-h200-mig-under-load-util-na", "input.txt");
  healthy(c);
  must_not(c, {"util.", "memory.", "pcie.", "thermal.", "power."});
}

TEST(Fixture031, SingleGpuTopologyHasNothingToReport) {
  const Case c = load("031-h100-topo-single-gpu-ansi", "topo.txt");
  EXPECT_TRUE(c.f().empty()) << dump(c);
}

TEST(Fixture052, EncoderCsvWithHistoricalPowerCapCounter) {
  const Case c = load("052-rtx2080super-windows-encoder-csv-counters", "input.csv");
  must(c, "util.video_engine_busy");
  must(c, "power.cap_history");
  must_not(c, {"power.sw_cap", "pcie.", "util.low"});
  healthy(c);
}

TEST(Fixture053, MigCsvIsHealthy) {
  const Case c = load("053-h200-mig-csv-utilization-na", "input.csv");
  healthy(c);
  must_not(c, {"util.", "memory."});
}

TEST(Fixture054, H200FullLoadDmonIsHealthy) {
  const Case c = load("054-h200-full-load-dmon-healthy", "dmon.log");
  healthy(c);
  must_not(c, kThrottle);
  must_not(c, {"thermal.", "power.", "util."});
}

}  // namespace
}  // namespace gw
