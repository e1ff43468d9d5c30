// The watch view without a terminal: the layout of a frame at 80x24, the sparkline with its
// marks, the keys, and the daemon's JSON read into a frame.
#include "watch/view.h"

#include <gtest/gtest.h>

#include "watch/feed.h"

namespace gw::watch {
namespace {

GpuState h100(unsigned i) {
  GpuState g;
  g.info.name = "NVIDIA H100 80GB HBM3";
  g.info.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
  g.info.temp_slowdown_c = 89;
  g.info.temp_shutdown_c = 92;
  g.info.max_sm_clock_mhz = 1980;
  g.info.pcie_max_gen = 5;
  g.info.pcie_max_width = 16;
  g.sample.temp_c = 60 + static_cast<int>(i);
  g.sample.util_gpu_pct = 90 + i;
  g.sample.power_mw = 600000 + i * 1000;
  g.sample.power_limit_mw = 700000;
  g.sample.sm_clock_mhz = 1980;
  g.sample.pcie_gen = 5;
  g.sample.pcie_width = 16;
  g.sample.mem_used_bytes = 70ULL << 30;
  g.sample.mem_total_bytes = 80ULL << 30;
  g.sample.clock_reasons = 0;
  return g;
}

Frame eight_gpus() {
  Frame f;
  f.now_ms = 1'800'000'000'000;
  f.history_to_ms = f.now_ms;
  f.history_from_ms = f.now_ms - 600'000;
  f.source = "test";
  for (unsigned i = 0; i < 8; ++i) f.snapshot.gpus.push_back(h100(i));
  GpuSample& hot = f.snapshot.gpus[2].sample;
  hot.temp_c = 91;
  hot.sm_clock_mhz = 795;
  hot.clock_reasons = clock_reason::kSwThermalSlowdown | clock_reason::kHwThermalSlowdown;
  f.snapshot.gpus[5].access = GpuAccess::kLost;
  Finding lost{
      "gpu.fallen_off_bus",  Severity::kCritical, 5, std::nullopt, "GPU fallen off the bus (lost)",
      {"NVML: GPU_IS_LOST"}, "Drain the node."};
  f.findings.push_back({lost, true, f.now_ms, std::nullopt});
  for (int k = 0; k < 60; ++k)
    f.history[2].util_pct.push_back({f.history_from_ms + k * 10'000, 100.0});
  f.history[2].throttle_ms.push_back(f.now_ms - 30'000);
  f.history[1].xid_ms.push_back(f.now_ms - 300'000);
  return f;
}

TEST(WatchView, EightGpusFitIn80x24WithReasonsAndTheLostGpu) {
  const Frame f = eight_gpus();
  const Grid g = render(f, UiState{}, 24, 80, {false});
  const std::string text = g.text();
  for (int r = 0; r < 24; ++r) EXPECT_LE(g.line(r).size(), 80u) << r;
  for (int i = 0; i < 8; ++i)
    EXPECT_NE(text.find(std::to_string(i) + "  H100 80GB HBM3"), std::string::npos) << text;
  EXPECT_NE(text.find("91C/89/92"), std::string::npos) << text;
  EXPECT_NE(text.find("795/1980"), std::string::npos) << text;
  EXPECT_NE(text.find("HW thermal slowdown, SW thermal slowdown"), std::string::npos) << text;
  EXPECT_NE(text.find("LOST"), std::string::npos) << text;
  EXPECT_NE(text.find("fallen off the bus (GPU is lost)"), std::string::npos) << text;
  EXPECT_NE(text.find("CRIT GPU 5 gpu.fallen_off_bus"), std::string::npos) << text;
  EXPECT_EQ(g.line(23).rfind("Up/Dn Enter:detail", 0), 0u) << text;
  // Two lines per GPU fit: the throttled GPU's history line carries its slowdown mark.
  EXPECT_NE(text.find('!'), std::string::npos) << text;
}

TEST(WatchView, TooManyGpusForTwoLinesFallBackToOneAndKeepTheSelectionVisible) {
  Frame f = eight_gpus();
  for (unsigned i = 8; i < 16; ++i) f.snapshot.gpus.push_back(h100(i));
  UiState ui;
  ui.selected = 15;
  const Grid g = render(f, ui, 24, 80, {false});
  EXPECT_NE(g.text().find(">15  H100"), std::string::npos) << g.text();
  EXPECT_EQ(g.line(23).rfind("Up/Dn Enter:detail", 0), 0u);
}

TEST(WatchView, SparklineScalesAndMarksXidAndSlowdown) {
  GpuHistory h;
  h.util_pct = {{0, 0}, {10, 50}, {20, 100}, {30, 100}};
  h.xid_ms = {25};
  h.throttle_ms = {15};
  const auto s = sparkline(h.util_pct, &h, 0, 40, 4, 0, 100, false);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0], "_");
  EXPECT_EQ(s[1], "!");
  EXPECT_EQ(s[2], "X");
  EXPECT_EQ(s[3], "#");
  const auto u = sparkline(h.util_pct, nullptr, 0, 80, 8, 0, 100, true);
  EXPECT_EQ(u[0], "▁");
  EXPECT_EQ(u[3], "█");
  EXPECT_EQ(u[7], " ");  // nothing sampled there
}

TEST(WatchView, KeysMoveSelectionSortScrollAndQuit) {
  UiState ui;
  EXPECT_FALSE(handle_key(ui, kKeyDown, 3));
  EXPECT_FALSE(handle_key(ui, kKeyDown, 3));
  EXPECT_FALSE(handle_key(ui, kKeyDown, 3));
  EXPECT_EQ(ui.selected, 2u);
  handle_key(ui, 's', 3);
  EXPECT_EQ(ui.sort, SortKey::kHealth);
  EXPECT_TRUE(handle_key(ui, '[', 3));
  EXPECT_EQ(ui.back_ms, 600'000);
  EXPECT_TRUE(handle_key(ui, ']', 3));
  EXPECT_EQ(ui.back_ms, 0);
  handle_key(ui, kKeyEnter, 3);
  EXPECT_TRUE(ui.detail);
  handle_key(ui, 'q', 3);
  EXPECT_TRUE(ui.quit);
}

TEST(WatchView, HealthSortPutsTheLostGpuFirstThenTheThrottledOne) {
  const auto order = sorted_gpus(eight_gpus(), SortKey::kHealth);
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(order[0], 5u);
  EXPECT_EQ(order[1], 2u);
}

TEST(WatchView, DetailPageShowsProcessesEvidenceAndRemedy) {
  Frame f = eight_gpus();
  f.snapshot.gpus[5].sample.processes =
      std::vector<ProcessInfo>{{4242, 3ULL << 30, "train.py", false}};
  f.users[4242] = "alice";
  UiState ui;
  ui.selected = 5;
  ui.detail = true;
  const std::string t = render(f, ui, 30, 100, {false}).text();
  EXPECT_NE(t.find("4242 alice"), std::string::npos) << t;
  EXPECT_NE(t.find("train.py"), std::string::npos) << t;
  EXPECT_NE(t.find("evidence: NVML: GPU_IS_LOST"), std::string::npos) << t;
  EXPECT_NE(t.find("remedy: Drain the node."), std::string::npos) << t;
}

TEST(WatchView, ProcessTableShowsTheQueueJobOfAJobsProcessOnly) {
  Frame f = eight_gpus();
  f.snapshot.gpus[5].sample.processes = std::vector<ProcessInfo>{
      {4242, 3ULL << 30, "train.py", false}, {4343, 1ULL << 30, "notebook", false}};
  f.users[4242] = "alice";
  f.users[4343] = "bob";
  f.jobs[4242] = 17;
  UiState ui;
  ui.selected = 5;
  ui.detail = true;
  const std::string t = render(f, ui, 30, 100, {false}).text();
  EXPECT_NE(t.find("4242 alice           3.0G 17     train.py"), std::string::npos) << t;
  EXPECT_NE(t.find("4343 bob             1.0G -      notebook"), std::string::npos) << t;
}

TEST(WatchApi, JobIdsByPidFromTheDaemonsGpusBody) {
  const auto jobs = jobs_from_api(nlohmann::json::parse(R"({"gpus": [], "jobs_by_pid":
    {"4242": 17, "x1": 3, "77": "9", "-5": 4, "88": 12}})"));
  EXPECT_EQ(jobs, (std::map<uint32_t, int64_t>{{4242, 17}, {88, 12}}));
  EXPECT_TRUE(jobs_from_api(nlohmann::json::parse(R"({"gpus": []})")).empty());  // older daemon
}

TEST(WatchView, ControlCharactersFromInputNeverReachTheScreen) {
  Grid g(1, 20);
  g.put(0, 0, "a\x1b[31mb");
  EXPECT_EQ(g.line(0), "a?[31mb");
}

TEST(WatchApi, FindingsHistoryAndEventsFromTheDaemonsJson) {
  const auto findings = findings_from_api(nlohmann::json::parse(R"({
    "active": [{"code": "thermal.sw_slowdown", "severity": "warning", "gpu": 2, "title": "hot",
                "evidence": ["91 C"], "remedy": "cool it", "raised_ms": 5},
               {"code": "gpu.fallen_off_bus", "severity": "critical", "gpu": 5, "title": "lost",
                "evidence": [], "remedy": "drain", "raised_ms": 7}],
    "cleared": [{"code": "x.y", "severity": "info", "gpu": null, "title": "old", "evidence": "bad",
                 "remedy": "", "raised_ms": 1, "cleared_ms": 2}]})"));
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].finding.code, "gpu.fallen_off_bus");  // active, worst first
  EXPECT_TRUE(findings[1].active);
  EXPECT_FALSE(findings[2].active);
  EXPECT_TRUE(findings[2].finding.evidence.empty());  // a string where a list belongs: skipped
  std::map<unsigned, GpuHistory> h;
  history_from_api(nlohmann::json::parse(R"({"points": [
    {"gpu": 1, "t_ms": 10, "min": 1, "avg": 2, "max": 3}, {"gpu": "x", "t_ms": 11}]})"),
                   "temp_c", h);
  ASSERT_EQ(h[1].temp_c.size(), 1u);
  EXPECT_EQ(h[1].temp_c[0].value, 3);
  history_from_api(nlohmann::json::parse(R"({"points": [{"gpu": 1, "t_ms": 20, "max": 32},
    {"gpu": 1, "t_ms": 21, "max": 1}]})"),
                   "clock_reasons", h);
  EXPECT_EQ(h[1].throttle_ms, std::vector<int64_t>{20});  // 0x20 SW thermal; 0x1 idle is no mark
  events_from_api(nlohmann::json::parse(R"({"events": [{"t_ms": 30, "kind": "xid", "gpu": 1},
    {"t_ms": 31, "kind": "driver_message", "gpu": 1}]})"),
                  h);
  EXPECT_EQ(h[1].xid_ms, std::vector<int64_t>{30});
}

}  // namespace
}  // namespace gw::watch
